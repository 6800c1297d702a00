package offline

import (
	"fmt"
	"io"
	"math"
	"strings"

	"streamer/pipeline"
)

// series is one line of a plot.
type series struct {
	name   string
	color  string
	dashed bool
	points []pipeline.CurvePoint
	y      func(pipeline.CurvePoint) float64
}

// WritePlot draws the prequential accuracy of the semi-supervised learner
// and of the supervised-only baseline over the stream as an SVG: the
// accuracy over the recent horizon (solid) and over the whole stream so far
// (dashed), against the number of examples seen.
func WritePlot(w io.Writer, title string, ssl, supervised []pipeline.CurvePoint) error {
	recent := func(p pipeline.CurvePoint) float64 { return p.RecentAccuracy }
	total := func(p pipeline.CurvePoint) float64 { return p.Accuracy }
	lines := []series{
		{"semi-supervised, recent", "#1f77b4", false, ssl, recent},
		{"supervised only, recent", "#d62728", false, supervised, recent},
		{"semi-supervised, cumulative", "#1f77b4", true, ssl, total},
		{"supervised only, cumulative", "#d62728", true, supervised, total},
	}
	const width, height, left, right, top, bottom = 800.0, 450.0, 60.0, 20.0, 40.0, 50.0
	maxX, minY := 1.0, 1.0
	for _, l := range lines {
		for _, p := range l.points {
			maxX = max(maxX, float64(p.Examples))
			minY = min(minY, l.y(p))
		}
	}
	minY = max(0, float64(int(minY*10))/10)
	maxX = niceCeil(maxX)
	x := func(v float64) float64 { return left + (width-left-right)*v/maxX }
	y := func(v float64) float64 { return top + (height-top-bottom)*(1-(v-minY)/(1-minY)) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%g" y="24" font-size="15">%s</text>`+"\n", left, escape(title))
	for t := minY; t <= 1.0001; t += 0.05 {
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%g" y="%.1f" text-anchor="end">%.2f</text>`+"\n",
			left, width-right, y(t), y(t), left-6, y(t)+4, t)
	}
	fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="black"/>`+"\n", left, width-right, height-bottom, height-bottom)
	ticks := int(maxX / niceStep(maxX))
	for i := 0; i <= ticks; i++ {
		v := maxX * float64(i) / float64(ticks)
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%.0f</text>`+"\n", x(v), height-bottom+16, v)
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">examples</text>`+"\n", (width+left)/2, height-12)
	for k, l := range lines {
		var pts []string
		for _, p := range l.points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(float64(p.Examples)), y(l.y(p))))
		}
		dash := ""
		if l.dashed {
			dash = ` stroke-dasharray="6,4"`
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.6"%s points="%s"/>`+"\n", l.color, dash, strings.Join(pts, " "))
		ly := height - bottom - 16*float64(len(lines)-k) - 4
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="%s" stroke-width="2"%s/><text x="%g" y="%g">%s</text>`+"\n",
			width-250, width-220, ly, ly, l.color, dash, width-214, ly+4, escape(l.name))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// niceCeil rounds x up to a whole number of its leading power of ten.
func niceCeil(x float64) float64 {
	p := 1.0
	for p*10 <= x {
		p *= 10
	}
	return math.Ceil(x/p) * p
}

// niceStep is the leading power of ten of x, halved when that leaves too
// few ticks.
func niceStep(x float64) float64 {
	p := 1.0
	for p*10 <= x {
		p *= 10
	}
	if x/p < 4 {
		p /= 2
	}
	return p
}
