// max_filter: a max filter over a disc of radius 26 on an RGB float image. Column maxima come
// from a doubling table (the max over 2^t rows), and each output pixel combines one column
// span per horizontal offset. It is in the suite because the deep table of shifted stages
// and the 53-wide horizontal gather make the fusion and storage choices hard.
#include "Halide.h"

#include <cmath>
#include <map>
#include <vector>

namespace protuner_apps {
namespace {

using namespace Halide;

class MaxFilter : public Generator<MaxFilter> {
 public:
  GeneratorParam<int> radius{"radius", 26};

  // Planar RGB: input(x, y, c).
  Input<Buffer<float>> input{"input", 3};
  Output<Buffer<float>> output{"output", 3};

  void generate() {
    const int r = radius;
    Func clamped = BoundaryConditions::repeat_edge(
        input,
        {{input.dim(0).min(), input.dim(0).extent()}, {input.dim(1).min(), input.dim(1).extent()}});
    // levels[t](x, y, c) is the max of rows y .. y + 2^t - 1.
    levels.push_back(clamped);
    for (int t = 1; (1 << t) <= 2 * r + 1; t++) {
      Func level("level_" + std::to_string(t));
      const Func &prev = levels.back();
      level(x, y, c) = max(prev(x, y, c), prev(x, y + (1 << (t - 1)), c));
      levels.push_back(level);
    }

    // At horizontal offset dx the disc spans rows y - h .. y + h. A span of n rows is
    // the max of two overlapping table entries of 2^floor(log2(n)) rows. Offsets with
    // the same h share one span Func.
    std::vector<Expr> columns;
    for (int dx = -r; dx <= r; dx++) {
      const int h = (int)std::floor(std::sqrt((r + 0.5) * (r + 0.5) - dx * dx));
      columns.push_back(span(h)(x + dx, y, c));
    }
    output(x, y, c) = max_tree(columns);
  }

  void schedule() {
    // 1536x2560 RGB, the image size of the Halide autoscheduler papers.
    input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
    output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
    if (!auto_schedule) {
      schedule_expert();
    }
  }

 private:
  Var x{"x"}, y{"y"}, c{"c"};
  std::vector<Func> levels;
  std::map<int, Func> spans;

  Func span(int h) {
    auto it = spans.find(h);
    if (it != spans.end()) {
      return it->second;
    }
    const int t = floor_log2(2 * h + 1);
    Func s("span_" + std::to_string(h));
    s(x, y, c) = max(levels[t](x, y - h, c), levels[t](x, y + h + 1 - (1 << t), c));
    spans[h] = s;
    return s;
  }

  // A balanced tree rather than a chain, so the 53 maxes are not one long dependency
  // chain in the generated code.
  static Expr max_tree(std::vector<Expr> terms) {
    while (terms.size() > 1) {
      std::vector<Expr> next;
      for (size_t i = 0; i + 1 < terms.size(); i += 2) {
        next.push_back(max(terms[i], terms[i + 1]));
      }
      if (terms.size() % 2) {
        next.push_back(terms.back());
      }
      terms.swap(next);
    }
    return terms[0];
  }

  static int floor_log2(int n) {
    int t = 0;
    while ((2 << t) <= n) {
      t++;
    }
    return t;
  }

  void schedule_expert() {
    const int vec = natural_vector_size<float>();
    Var xo{"xo"}, xi{"xi"}, yo{"yo"}, yi{"yi"}, tile{"tile"};
    // Tiles of 256 x 256 pixels per channel. Within a tile the table slides down one
    // row per output row, so each level keeps only a folded window of rows and the
    // tile's working set stays in L2; the taller the tile, the less the 84-row table
    // warm-up costs.
    output.split(x, xo, xi, 256, TailStrategy::GuardWithIf)
        .split(y, yo, yi, 256, TailStrategy::GuardWithIf)
        .reorder(xi, yi, xo, yo, c)
        .fuse(xo, yo, tile)
        .fuse(tile, c, tile)
        .parallel(tile)
        .vectorize(xi, vec);
    for (size_t t = 1; t < levels.size(); t++) {
      levels[t].store_at(output, tile).compute_at(output, yi).vectorize(x, vec);
    }
    // One row of each span per output row: the 53-tap max then reads ~20 short rows
    // at constant offsets instead of 106 table rows, so its addresses fit in registers.
    for (auto &kv : spans) {
      kv.second.store_at(output, tile).compute_at(output, yi).vectorize(x, vec);
    }
  }
};

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::MaxFilter, max_filter)
