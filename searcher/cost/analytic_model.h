// A cost model that needs no training, so the product works out of the box: per stage,
// compute time (vector and scalar instructions at the machine's throughput), memory time
// (traffic beyond each cache level from the featurizer's reuse model, at that level's
// bandwidth), parallel speed-up limited by load imbalance, and the overheads of starting
// parallel loops, producing Funcs inside loops, and allocating. It reads only the features
// (featurizer.h), so it memoizes like them. Its time is kept by term (AnalyticTerm), so an
// app's own measurements can reweigh the terms during tuning (analytic_calibration.h).
//
// Not thread-safe (it owns a FeatureCache): one instance per search thread.
#pragma once

#include <array>
#include <memory>

#include "common/schedule/schedule_directives.h"
#include "searcher/cost/cost_model.h"
#include "searcher/cost/featurizer.h"

namespace protuner {

// The model's constants beyond the machine's facts, in one place. Cycle costs are per
// core; they are rough by design (`build/bin/analytic_model_bench` checks the model's
// ranking against measured schedules).
struct AnalyticModelOptions {
  double cycles_per_vector_op = 0.5;  // two vector ALU pipes
  double cycles_per_scalar_op = 0.35;  // four scalar ALUs, minus address arithmetic
  double cycles_per_load = 0.5;        // two load ports
  double cycles_per_store = 1.0;       // one store port: a point's value, or a vector's
  // Gathers and scalarized loads, per lane: Halide 14 emits a scalar load and an insert
  // into the vector for each (read in its assembly for a transposed read and a table
  // lookup). 2 ranks the suite's measured candidates best, against 1, 1.5 and 3
  // (`protuner evaluate --model analytic --data
  // searcher/cost/learned/data/suite_candidates.jsonl`, with this constant changed).
  double cycles_per_gathered_lane = 2.0;
  double cycles_per_block = 1.0;          // loop overhead per innermost block
  // The round trip of a dependence carried from one block to the next (featurizer.h's
  // block_waits_for_previous): a vector add or multiply-add's latency where the values
  // stay in registers, a store, its forwarding to the next load and the arithmetic where
  // they do not.
  double register_chain_cycles = 4;
  double memory_chain_cycles = 9;
  // Halide 14 leaves LLVM's loop vectorizer on: an unvectorized stage whose innermost loop
  // walks x without gathers runs at this share of the native lanes (a pointwise chain
  // unvectorized runs as fast as vectorized by 16).
  double auto_vector_lane_share = 0.5;
  // Nor does it vectorize a loop whose body stores more unrolled rows than this: rows of
  // one buffer at a stride LLVM does not know may overlap, and it checks each pair at run
  // time up to a limit (8 checks: 4 rows). edge_nms' output, unvectorized with its x loop
  // innermost around 4 unrolled rows, compiles to vectors of 16; around 8 rows, to scalar
  // code, and a schedule predicted at 1.7 ms that way ran 13.7 ms with freed memory kept
  // for reuse (`build/bin/search_probe edge_nms --library
  // build/lib/libprotuner_corpus_generators.so --schedule S --assembly DIR`, then
  // `protuner measure ... --schedule S --allocator pooling`).
  double auto_vector_max_unrolled = 4;
  double cycles_per_production = 20;      // bounds and loop setup of a Func produced in a loop
  // One core alone draws this share of the DRAM bandwidth all cores draw together.
  double single_core_dram_share = 0.6;
  // What each stream from or to memory costs a core beyond its bytes (featurizer.h's
  // memory_streams: the prefetchers start over, the first lines wait for memory).
  // palette_quantize's recolored image in tiles 128 wide runs 2.60 ms, in tiles of whole
  // rows 1.46 ms (the Halide profiler's time of that stage, `target=...-profile`, the rest
  // of the schedule the same): 57,240 more streams for 1.14 ms on 2 cores.
  double memory_stream_seconds = 40e-9;
  double parallel_launch_seconds = 3e-6;  // start and join of a parallel loop
  double parallel_task_seconds = 0.2e-6;  // per task
  double allocation_seconds = 0.1e-6;     // malloc and free
  // Allocations inside loops this small go on the stack (schedule_directives.h): free.
  double stack_allocation_max_bytes = static_cast<double>(kStackAllocationMaxBytes);
  // Allocations at least this big, or freed together with others to at least this many
  // bytes (heap_bytes_freed_together), are fresh pages on every run, so each first touch
  // page-faults. Candidates are timed as the user's program runs them, in a fresh process
  // under glibc's malloc as it comes (measurer/child_environment.h): glibc maps blocks of
  // its mmap threshold and more afresh, and hands a heap's free top back to the kernel
  // once it exceeds its trim threshold, both 128 KiB in a process that has not yet freed
  // a larger mapped block. So per-run intermediates of that size or more fault on every
  // run, whether one big one at root or a few freed together per strip of a parallel
  // loop: harris'
  // own schedule (three 110 KB buffers per strip) runs 3 ms with freed memory kept for
  // reuse and 60-75 ms in RunGen (`build/bin/rungen_agreement --apps harris`, its
  // pooling and RunGen columns).
  double page_fault_min_bytes = 128.0 * 1024;
  // First touches of fresh anonymous memory cost microseconds per 4 KiB page, from one
  // thread or two alike (they do not scale with cores); with the unmap and map of every
  // run around them, 10 to 20 us on the machine class (harris' root schedule, about
  // 38,000 pages a run, runs many times slower in RunGen than with memory reused; the same
  // bench). Calibration fits the term's weight per app.
  double page_fault_seconds_per_byte = 10e-6 / 4096;
};

// What a stage's predicted time is spent on. A stage's time is the sum of its terms; a
// calibration (analytic_calibration.h) weighs each term by an app's own measurements.
enum class AnalyticTerm : int {
  kCompute,           // instructions, where they take longer than the cache traffic
  kCacheTraffic,      // L2 and L3 fills, where they take longer than the instructions
  kMemoryTraffic,     // DRAM traffic
  kParallelOverhead,  // starting parallel loops and their tasks
  kAllocation,        // heap allocations inside loops
  kPageFaults,        // first touches of allocations mapped afresh
  kCount
};
constexpr int kNumAnalyticTerms = static_cast<int>(AnalyticTerm::kCount);
using AnalyticTerms = std::array<double, kNumAnalyticTerms>;
const char *analytic_term_name(AnalyticTerm term);
// Every weight 1: the model as it stands.
AnalyticTerms unit_term_weights();

// Per stage node, the bytes of the heap allocations freed together with its own at the end
// of each iteration of its storage loop, its own included (0 for a stage that allocates
// nothing on the heap). glibc hands a heap's free top back to the kernel once it exceeds
// 128 KiB, so allocations freed together past that size page-fault afresh in every
// iteration, however small each is: edge_nms' producers, four buffers of 63 KB per output
// tile, ran 31 ms under glibc's malloc and 1.26 ms with freed memory kept for reuse
// (`protuner measure --library build/lib/libprotuner_corpus_generators.so --generator
// edge_nms --schedule S`, with and without `--allocator pooling`).
std::vector<double> heap_bytes_freed_together(const PipelineFeatures &features,
                                              const AnalyticModelOptions &options = {});
// Seconds per term of one stage node of an already featurized schedule (`features`
// computed for `machine`), whose heap allocation is freed with `freed_together` bytes in
// all (heap_bytes_freed_together).
AnalyticTerms analytic_stage_terms(const StageFeatures &stage, double freed_together,
                                   const MachineModel &machine,
                                   const AnalyticModelOptions &options = {});
// The same summed over every stage of a schedule.
AnalyticTerms analytic_terms(const PipelineFeatures &features, const MachineModel &machine,
                             const AnalyticModelOptions &options = {});
// The seconds `terms` come to under `weights`.
double weighed_seconds(const AnalyticTerms &terms, const AnalyticTerms &weights);
// Seconds per stage node of already featurized schedules, under term `weights`: what
// AnalyticModel predicts (uncalibrated by default, for evaluating the model on a dataset).
std::vector<double> analytic_stage_costs(const PipelineFeatures &features,
                                         const MachineModel &machine,
                                         const AnalyticModelOptions &options = {},
                                         const AnalyticTerms &weights = unit_term_weights());

class AnalyticCalibration;

class AnalyticModel : public CostModel {
 public:
  // With a calibration, each prediction weighs the terms by its current weights (which
  // change as the app's measurements come in); without one, every weight is 1.
  AnalyticModel(std::shared_ptr<const PipelineGraph> graph, MachineModel machine = {},
                AnalyticModelOptions options = {},
                std::shared_ptr<const AnalyticCalibration> calibration = nullptr);

  std::vector<double> predict(const std::vector<const ScheduleState *> &batch) override;
  std::string name() const override { return "analytic"; }

  // Seconds per stage node (PipelineFeatures order) of one featurized state, calibrated.
  std::vector<double> stage_costs(const PipelineFeatures &features) const;
  const Featurizer &featurizer() const { return featurizer_; }

 private:
  AnalyticTerms weights() const;

  Featurizer featurizer_;
  FeatureCache cache_;
  AnalyticModelOptions options_;
  std::shared_ptr<const AnalyticCalibration> calibration_;
};

}  // namespace protuner
