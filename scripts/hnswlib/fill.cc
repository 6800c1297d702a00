// fill: the hnswlib reference for `streamer bench ann`. It reads the points
// `streamer bench ann --export FILE` wrote, inserts the first N into an
// empty hnswlib index (M, ef_construction as given; one thread or more, as
// hnswlib's Python binding does with num_threads) and prints one line of
// JSON with the fill rate, the figure `bench ann` reports as
// fill_inserts_per_sec. With --recall S it also checks the searches of S
// inserted points (k = 10, ef = 100) against brute force.
//
// Dense points use hnswlib's own L2 space (float32, its SIMD kernels).
// Sparse points, which hnswlib has no space for, use a space whose element
// is a row number and whose distance is 1 - cos by the usual sorted-index
// merge, rows normalized once on load: the HNSW algorithm as hnswlib runs
// it, with a sparse metric plugged in.
//
// Build and run (see README.md beside this file):
//
//	g++ -O3 -march=native -std=c++17 -pthread -o /tmp/hnswfill fill.cc
//	/tmp/hnswfill --points 20000 FILE
#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sys/resource.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

// Points as bench ann exports them: a header "ANNPTS1\n", then per point an
// int32 count n and, for dense files, n float32 values; for sparse files,
// n int32 indices (increasing) then n float32 values. The header's next
// byte says which: 'd' or 's'.
struct Points {
  bool sparse = false;
  int dim = 0;
  std::vector<float> dense;               // row-major, dim per row
  std::vector<uint32_t> start;            // sparse rows: start[i]..start[i+1]
  std::vector<int32_t> idx;
  std::vector<float> val;
  size_t rows() const { return sparse ? start.size() - 1 : dim == 0 ? 0 : dense.size() / dim; }
};

Points load(const std::string& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("open " + path);
  char magic[9] = {};
  in.read(magic, 8);
  if (std::string(magic, 7) != "ANNPTS1") throw std::runtime_error(path + ": not a bench ann export");
  Points p;
  p.sparse = magic[7] == 's';
  p.start.push_back(0);
  int32_t n;
  while (p.rows() < limit && in.read(reinterpret_cast<char*>(&n), 4)) {
    if (p.sparse) {
      size_t at = p.idx.size();
      p.idx.resize(at + n);
      p.val.resize(at + n);
      in.read(reinterpret_cast<char*>(&p.idx[at]), 4 * n);
      in.read(reinterpret_cast<char*>(&p.val[at]), 4 * n);
      double sq = 0;
      for (int k = 0; k < n; k++) sq += double(p.val[at + k]) * p.val[at + k];
      float inv = sq > 0 ? float(1 / std::sqrt(sq)) : 0;
      for (int k = 0; k < n; k++) p.val[at + k] *= inv;
      p.start.push_back(uint32_t(p.idx.size()));
    } else {
      if (p.dim == 0) p.dim = n;
      if (n != p.dim) throw std::runtime_error("dense rows of different lengths");
      size_t at = p.dense.size();
      p.dense.resize(at + n);
      in.read(reinterpret_cast<char*>(&p.dense[at]), 4 * n);
    }
  }
  return p;
}

// SparseCosine is an hnswlib space over the rows of a Points: an element is
// a uint32 row number.
class SparseCosine : public hnswlib::SpaceInterface<float> {
 public:
  explicit SparseCosine(const Points* p) : p_(p) {}
  size_t get_data_size() override { return sizeof(uint32_t); }
  hnswlib::DISTFUNC<float> get_dist_func() override { return &dist; }
  void* get_dist_func_param() override { return const_cast<Points*>(p_); }

  static float dist(const void* a, const void* b, const void* param) {
    auto p = static_cast<const Points*>(param);
    uint32_t i = *static_cast<const uint32_t*>(a), j = *static_cast<const uint32_t*>(b);
    uint32_t x = p->start[i], xe = p->start[i + 1], y = p->start[j], ye = p->start[j + 1];
    float dot = 0;
    while (x < xe && y < ye) {
      int32_t u = p->idx[x], v = p->idx[y];
      if (u == v) dot += p->val[x++] * p->val[y++];
      else if (u < v) x++;
      else y++;
    }
    return 1 - dot;
  }

 private:
  const Points* p_;
};

// Counting wraps a space and counts its distance computations, for
// --count; it is not used when timing.
class Counting : public hnswlib::SpaceInterface<float> {
 public:
  explicit Counting(hnswlib::SpaceInterface<float>* s) : inner_{s->get_dist_func(), s->get_dist_func_param(), s->get_data_size()} {}
  size_t get_data_size() override { return inner_.size; }
  hnswlib::DISTFUNC<float> get_dist_func() override { return &dist; }
  void* get_dist_func_param() override { return &inner_; }
  static std::atomic<uint64_t> count;

 private:
  struct Inner {
    hnswlib::DISTFUNC<float> f;
    void* param;
    size_t size;
  } inner_;
  static float dist(const void* a, const void* b, const void* param) {
    count.fetch_add(1, std::memory_order_relaxed);
    auto in = static_cast<const Inner*>(param);
    return in->f(a, b, in->param);
  }
};
std::atomic<uint64_t> Counting::count{0};

// cpu_seconds is the process's user and system time so far.
double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  size_t points = 20000, m = 16, efc = 200, threads = 1, recall = 0;
  bool count = false;
  std::string file;
  for (int a = 1; a < argc; a++) {
    std::string s = argv[a];
    auto next = [&]() -> size_t {
      if (a + 1 >= argc) throw std::runtime_error(s + " wants a value");
      return std::stoul(argv[++a]);
    };
    if (s == "--points") points = next();
    else if (s == "--m") m = next();
    else if (s == "--ef-construction") efc = next();
    else if (s == "--threads") threads = next();
    else if (s == "--recall") recall = next();
    else if (s == "--count") count = true;
    else file = s;
  }
  if (file.empty()) {
    fprintf(stderr, "usage: hnswfill [--points N] [--m M] [--ef-construction EF] [--threads T] [--recall S] [--count] FILE\n");
    return 2;
  }
  Points p = load(file, points);
  size_t n = p.rows();
  hnswlib::L2Space l2(p.dim > 0 ? p.dim : 1);
  SparseCosine cosine(&p);
  hnswlib::SpaceInterface<float>* space = p.sparse ? static_cast<hnswlib::SpaceInterface<float>*>(&cosine) : &l2;
  Counting counting(space);
  if (count) space = &counting;
  hnswlib::HierarchicalNSW<float> index(space, n, m, efc, 100);
  std::vector<uint32_t> ids(n);
  for (size_t i = 0; i < n; i++) ids[i] = uint32_t(i);
  auto elem = [&](size_t i) -> const void* {
    return p.sparse ? static_cast<const void*>(&ids[i]) : static_cast<const void*>(&p.dense[i * p.dim]);
  };

  auto t0 = std::chrono::steady_clock::now();
  double cpu0 = cpu_seconds();
  // As the Python binding does: the first point alone, then the rest
  // handed out one at a time to the threads.
  index.addPoint(elem(0), 0);
  std::atomic<size_t> next{1};
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; t++) {
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < n;) index.addPoint(elem(i), i);
    });
  }
  for (auto& t : pool) t.join();
  double secs = seconds_since(t0), cpu = cpu_seconds() - cpu0;

  uint64_t distances = Counting::count.load();
  double hits = 0, total = 0;
  if (recall > 0) {
    index.setEf(100);
    for (size_t s = 0; s < recall && s < n; s++) {
      size_t q = (s * 7919) % n;
      std::vector<float> d(n);
      for (size_t j = 0; j < n; j++) d[j] = space->get_dist_func()(elem(q), elem(j), space->get_dist_func_param());
      d[q] = INFINITY;  // a point is not its own neighbour
      std::vector<float> sorted = d;
      std::nth_element(sorted.begin(), sorted.begin() + 9, sorted.end());
      float kth = sorted[9];
      auto res = index.searchKnn(elem(q), 11);
      std::vector<std::pair<float, size_t>> got;
      while (!res.empty()) {
        if (res.top().second != q) got.push_back(res.top());
        res.pop();
      }
      std::sort(got.begin(), got.end());
      for (size_t r = 0; r < 10 && r < got.size(); r++)
        if (d[got[r].second] <= kth * (1 + 1e-6f)) hits++;
      total += 10;
    }
  }
  printf("{\"engine\":\"hnswlib 0.6.2\",\"points\":%zu,\"sparse\":%s,\"m\":%zu,\"ef_construction\":%zu,"
         "\"threads\":%zu,\"seconds\":%.3f,\"fill_inserts_per_sec\":%.1f,\"fill_cpu_inserts_per_sec\":%.1f",
         n, p.sparse ? "true" : "false", m, efc, threads, secs, n / secs, n / cpu);
  if (count) printf(",\"distances_per_insert\":%.1f", double(distances) / n);
  if (total > 0) printf(",\"search_recall_at_10\":%.4f", hits / total);
  printf("}\n");
  return 0;
}
