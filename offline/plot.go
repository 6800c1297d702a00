package offline

import (
	"fmt"
	"io"
	"math"
	"strings"

	"streamer/snapshot"
)

const (
	sslColor        = "#1f77b4"
	supervisedColor = "#d62728"
)

// point is one (examples, accuracy) point of a line.
type point struct{ x, y float64 }

// series is one line of a plot.
type series struct {
	name   string
	color  string
	dash   string // SVG stroke-dasharray; "" is solid
	points []point
}

// band is a shaded area between lo and hi, such as mean ± standard
// deviation.
type band struct {
	color  string
	lo, hi []point
}

// mark is a vertical line at x, named in the legend by name: a drift
// alarm.
type mark struct {
	x     float64
	name  string
	color string
}

// panel is one chart: lines against the number of examples.
type panel struct {
	title string
	lines []series
	bands []band
	marks []mark
	// xLabel names the x axis; "" means examples.
	xLabel string
}

const (
	plotWidth, panelHeight = 1000.0, 450.0
	plotLeft, plotRight    = 60.0, 260.0 // the legend sits right of the chart
	panelTop, panelBottom  = 40.0, 50.0
	dashed, dotted         = "6,4", "2,3"
)

// WritePlot draws the prequential accuracy of the semi-supervised learner
// and of the supervised-only baseline over the stream as an SVG: the
// accuracy over the recent horizon (solid) and over the whole stream so far
// (dashed), against the number of examples seen.
func WritePlot(w io.Writer, title string, ssl, supervised []snapshot.CurvePoint) error {
	return writePanels(w, []panel{streamPanel(title, ssl, supervised, nil, nil)})
}

// WriteEvalPlot draws an eval report: the accuracy over the stream as
// WritePlot draws it, with the accuracy over every example's prediction at
// arrival (dotted), the drift alarms of every seed (vertical lines, a
// color by detector), and, with a test file checked during the stream, a
// second chart of the test accuracy of the models in force (the mean over
// the seeds, shaded ± one standard deviation).
func WriteEvalPlot(w io.Writer, title string, rep EvalReport) error {
	panels := []panel{streamPanel(title, rep.Curve, rep.BaselineCurve, rep.AllCurve, rep.SupervisedAllCurve)}
	if len(rep.Seeds) > 1 {
		panels[0] = seedsPanel(title, rep)
	}
	panels[0].marks = alarmMarks(rep)
	if len(rep.TestCurve) > 0 {
		panels = append(panels, testPanel(rep))
	}
	if rep.Review != nil {
		panels = append(panels, reviewPanel(*rep.Review))
	}
	if rep.Strategy == "active" {
		panels = append(panels, spentPanel(rep))
	}
	return writePanels(w, panels)
}

// driftColors colors the alarms by detector (package drift's names).
var driftColors = map[string]string{"labels": "#2ca02c", "neighbours": "#9467bd", "scores": "#ff7f0e"}

// alarmMarks returns the drift alarms of every seed of rep.
func alarmMarks(rep EvalReport) []mark {
	var out []mark
	for _, s := range rep.PerSeed {
		for _, a := range s.Alarms {
			color, ok := driftColors[a.Detector]
			if !ok {
				color = "#7f7f7f"
			}
			out = append(out, mark{x: float64(a.Examples), name: "drift alarm: " + a.Detector, color: color})
		}
	}
	return out
}

// reviewPanel draws the precision of the predictions decided
// automatically against their share of the examples, in percent: the
// curve of one probability cut for all classes, chosen in hindsight, and
// the point the routing reached (a short cross).
func reviewPanel(r ReviewScores) panel {
	var curve []point
	for _, p := range r.Curve {
		curve = append(curve, point{100 * p.Coverage, p.Precision})
	}
	title := fmt.Sprintf("Review routing for precision %.2f: nothing decided automatically", r.TargetPrecision)
	var reached []point
	if r.Precision != nil {
		x, y := 100*r.Decided, *r.Precision
		reached = []point{{x - 1, y}, {x + 1, y}, {x, y}, {x, y - 0.005}, {x, y + 0.005}}
		title = fmt.Sprintf("Review routing for precision %.2f: decided %.1f%% at precision %.4f", r.TargetPrecision, 100*r.Decided, y)
	}
	return panel{
		title:  title,
		xLabel: "% of examples decided automatically",
		lines: []series{
			{"one cut, in hindsight", sslColor, "", curve},
			{"target precision", supervisedColor, dashed, []point{{0, r.TargetPrecision}, {100, r.TargetPrecision}}},
			{"routing reached", "black", "", reached},
		},
	}
}

// spentPanel draws the every-example accuracy so far against the labels
// spent: the answers to label requests, and with --compare-random the
// random reveals of the same seeds.
func spentPanel(rep EvalReport) panel {
	title := "Accuracy of every example so far, against the labels spent"
	if len(rep.Seeds) > 1 {
		title += fmt.Sprintf(", mean of %d seeds", len(rep.Seeds))
	}
	lines := []series{{"label requests", sslColor, "", spentPoints(rep.SpentCurve)}}
	if rep.Random != nil {
		lines = append(lines, series{"random reveals", supervisedColor, dashed, spentPoints(rep.Random.SpentCurve)})
	}
	return panel{title: title, lines: lines, xLabel: "labels spent"}
}

func spentPoints(c []SpentPoint) []point {
	out := make([]point, len(c))
	for i, p := range c {
		out[i] = point{float64(p.Labels), p.AllAccuracy}
	}
	return out
}

func streamPanel(title string, ssl, supervised, sslAll, supervisedAll []snapshot.CurvePoint) panel {
	recent := func(p snapshot.CurvePoint) float64 { return p.RecentAccuracy }
	total := func(p snapshot.CurvePoint) float64 { return p.Accuracy }
	lines := []series{
		{"semi-supervised, recent", sslColor, "", curvePoints(ssl, recent)},
		{"supervised only, recent", supervisedColor, "", curvePoints(supervised, recent)},
		{"semi-supervised, cumulative", sslColor, dashed, curvePoints(ssl, total)},
		{"supervised only, cumulative", supervisedColor, dashed, curvePoints(supervised, total)},
	}
	if len(sslAll) > 0 {
		lines = append(lines,
			series{"semi-supervised, every example", sslColor, dotted, curvePoints(sslAll, total)},
			series{"supervised only, every example", supervisedColor, dotted, curvePoints(supervisedAll, total)})
	}
	return panel{title: title, lines: lines}
}

// seedsPanel draws, for several label seeds, every example's accuracy at
// arrival (over each step of examples, solid; over the stream so far,
// dashed): the mean over the seeds, shaded ± one standard deviation.
func seedsPanel(title string, rep EvalReport) panel {
	title += fmt.Sprintf(", mean ± std of %d seeds", len(rep.Seeds))
	recent := func(p snapshot.CurvePoint) float64 { return p.RecentAccuracy }
	total := func(p snapshot.CurvePoint) float64 { return p.Accuracy }
	return panel{
		title: title,
		lines: []series{
			{"semi-supervised, recent", sslColor, "", curvePoints(rep.AllCurve, recent)},
			{"supervised only, recent", supervisedColor, "", curvePoints(rep.SupervisedAllCurve, recent)},
			{"semi-supervised, cumulative", sslColor, dashed, curvePoints(rep.AllCurve, total)},
			{"supervised only, cumulative", supervisedColor, dashed, curvePoints(rep.SupervisedAllCurve, total)},
		},
		bands: []band{
			curveBand(sslColor, rep.AllCurve, rep.AllCurveStd, recent),
			curveBand(supervisedColor, rep.SupervisedAllCurve, rep.SupervisedAllCurveStd, recent),
		},
	}
}

// curveBand shades mean ± std of the figure y along a curve.
func curveBand(color string, mean, std []snapshot.CurvePoint, y func(snapshot.CurvePoint) float64) band {
	bd := band{color: color}
	for i, p := range mean {
		d := 0.0
		if i < len(std) {
			d = y(std[i])
		}
		bd.lo = append(bd.lo, point{float64(p.Examples), max(0, y(p)-d)})
		bd.hi = append(bd.hi, point{float64(p.Examples), min(1, y(p)+d)})
	}
	return bd
}

func testPanel(rep EvalReport) panel {
	title := fmt.Sprintf("Accuracy on the test file (%d rows) of the model in force", rep.TestRows)
	if len(rep.Seeds) > 1 {
		title += fmt.Sprintf(", mean ± std of %d seeds", len(rep.Seeds))
	}
	ssl := func(p TestPoint) float64 { return p.SSLAccuracy }
	sup := func(p TestPoint) float64 { return p.SupervisedAccuracy }
	pn := panel{title: title, lines: []series{
		{"semi-supervised", sslColor, "", testPoints(rep.TestCurve, nil, ssl, 0)},
		{"supervised only", supervisedColor, "", testPoints(rep.TestCurve, nil, sup, 0)},
	}}
	if len(rep.Seeds) > 1 {
		pn.bands = []band{
			{sslColor, testPoints(rep.TestCurve, rep.TestCurveStd, ssl, -1), testPoints(rep.TestCurve, rep.TestCurveStd, ssl, 1)},
			{supervisedColor, testPoints(rep.TestCurve, rep.TestCurveStd, sup, -1), testPoints(rep.TestCurve, rep.TestCurveStd, sup, 1)},
		}
	}
	return pn
}

func curvePoints(c []snapshot.CurvePoint, y func(snapshot.CurvePoint) float64) []point {
	pts := make([]point, len(c))
	for i, p := range c {
		pts[i] = point{float64(p.Examples), y(p)}
	}
	return pts
}

// testPoints returns mean + k·std of the figure y along the test curve.
func testPoints(mean, std []TestPoint, y func(TestPoint) float64, k float64) []point {
	pts := make([]point, len(mean))
	for i, p := range mean {
		v := y(p)
		if k != 0 {
			v = min(1, max(0, v+k*y(std[i])))
		}
		pts[i] = point{float64(p.Examples), v}
	}
	return pts
}

// writePanels draws the panels one above the other, as one SVG.
func writePanels(w io.Writer, panels []panel) error {
	var b strings.Builder
	height := panelHeight * float64(len(panels))
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" font-family="sans-serif" font-size="12">`+"\n", plotWidth, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	for k, pn := range panels {
		pn.draw(&b, panelHeight*float64(k))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// draw writes the panel with its top edge at offset.
func (pn panel) draw(b *strings.Builder, offset float64) {
	maxX, minY := pn.extent()
	top, bottom := offset+panelTop, offset+panelHeight-panelBottom
	x := func(v float64) float64 { return plotLeft + (plotWidth-plotLeft-plotRight)*v/maxX }
	y := func(v float64) float64 { return top + (bottom-top)*(1-(v-minY)/(1-minY)) }
	fmt.Fprintf(b, `<text x="%g" y="%g" font-size="15">%s</text>`+"\n", plotLeft, offset+24, escape(pn.title))
	for t := minY; t <= 1.0001; t += 0.05 {
		fmt.Fprintf(b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%g" y="%.1f" text-anchor="end">%.2f</text>`+"\n",
			plotLeft, plotWidth-plotRight, y(t), y(t), plotLeft-6, y(t)+4, t)
	}
	fmt.Fprintf(b, `<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="black"/>`+"\n", plotLeft, plotWidth-plotRight, bottom, bottom)
	ticks := int(maxX / niceStep(maxX))
	for i := 0; i <= ticks; i++ {
		v := maxX * float64(i) / float64(ticks)
		fmt.Fprintf(b, `<text x="%.1f" y="%g" text-anchor="middle">%.0f</text>`+"\n", x(v), bottom+16, v)
	}
	xLabel := pn.xLabel
	if xLabel == "" {
		xLabel = "examples"
	}
	fmt.Fprintf(b, `<text x="%g" y="%g" text-anchor="middle">%s</text>`+"\n", (plotWidth-plotRight+plotLeft)/2, offset+panelHeight-12, escape(xLabel))
	for _, bd := range pn.bands {
		var pts []string
		for _, p := range bd.hi {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.x), y(p.y)))
		}
		for i := len(bd.lo) - 1; i >= 0; i-- {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(bd.lo[i].x), y(bd.lo[i].y)))
		}
		fmt.Fprintf(b, `<polygon fill="%s" fill-opacity="0.15" stroke="none" points="%s"/>`+"\n", bd.color, strings.Join(pts, " "))
	}
	for k, l := range pn.lines {
		var pts []string
		for _, p := range l.points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.x), y(p.y)))
		}
		dash := ""
		if l.dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, l.dash)
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.6"%s points="%s"/>`+"\n", l.color, dash, strings.Join(pts, " "))
		lx, ly := plotWidth-plotRight+15, top+10+18*float64(k)
		fmt.Fprintf(b, `<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="%s" stroke-width="2"%s/><text x="%g" y="%g">%s</text>`+"\n",
			lx, lx+30, ly, ly, l.color, dash, lx+36, ly+4, escape(l.name))
	}
	pn.drawMarks(b, x, top, bottom, len(pn.lines))
}

// drawMarks draws the marks as vertical lines, and names each kind once
// in the legend, below its first legend rows.
func (pn panel) drawMarks(b *strings.Builder, x func(float64) float64, top, bottom float64, legendRows int) {
	named := map[string]bool{}
	for _, m := range pn.marks {
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="%s" stroke-width="1" stroke-opacity="0.7"/>`+"\n",
			x(m.x), x(m.x), top, bottom, m.color)
		if named[m.name] {
			continue
		}
		named[m.name] = true
		lx, ly := plotWidth-plotRight+15, top+10+18*float64(legendRows)
		legendRows++
		fmt.Fprintf(b, `<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="%s" stroke-width="2"/><text x="%g" y="%g">%s</text>`+"\n",
			lx+15, lx+15, ly-7, ly+7, m.color, lx+36, ly+4, escape(m.name))
	}
}

// extent returns the largest x of the panel, rounded up, and the smallest
// y, rounded down to a tenth (at most 0.9, so that the y axis has a span).
func (pn panel) extent() (maxX, minY float64) {
	maxX, minY = 1.0, 1.0
	see := func(pts []point) {
		for _, p := range pts {
			maxX, minY = max(maxX, p.x), min(minY, p.y)
		}
	}
	for _, l := range pn.lines {
		see(l.points)
	}
	for _, bd := range pn.bands {
		see(bd.lo)
	}
	return niceCeil(maxX), min(0.9, max(0, math.Floor(minY*10)/10))
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
