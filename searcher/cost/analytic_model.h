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
  // When a run's heap allocations page-fault (heap_allocations_faulting). Candidates are
  // timed as the user's program runs them, in a fresh process under glibc's malloc as it
  // comes (measurer/child_environment.h). glibc maps a block of its mmap threshold or more
  // afresh, and hands the heap's free top back to the kernel once it reaches its trim
  // threshold; both start at this. Freeing a block it mapped raises the mmap threshold to
  // that block and the trim threshold to twice it, up to mmap_threshold_max_bytes, for the
  // rest of the process. So from the second run on, a block comes from the heap and its
  // pages stay mapped, unless the blocks freed into the top with it reach twice the
  // largest block of the run, or 128 KiB when none is bigger than that (edge_nms' four
  // 63 KB producers per output tile ran 31 ms under glibc's malloc and 1.26 ms with freed
  // memory kept for reuse; harris' own schedule, three 110 KB buffers per strip, 3 ms
  // against 60-75 ms in RunGen: `build/bin/rungen_agreement --apps harris`).
  // depthwise_conv's padded plane, one 1.87 MB block per task of 16, does not fault
  // (about 0.8 ms a run under glibc's malloc); rgb_to_hsv's hsv, a Tuple of three 2.07 MB
  // blocks per task, faults in every task (9.9 ms against 1.95 with `--allocator
  // pooling`; `/usr/bin/time` counts 6,000 faults a run). `protuner measure --library
  // build/lib/libprotuner_corpus_generators.so --generator G --schedule S`, with and
  // without `--allocator pooling`, shows the difference for any schedule.
  double page_fault_min_bytes = 128.0 * 1024;
  // Blocks above this are mapped afresh by every malloc (glibc's DEFAULT_MMAP_THRESHOLD_MAX
  // on 64-bit): they fault in every realization, and never raise the thresholds.
  double mmap_threshold_max_bytes = 32.0 * 1024 * 1024;
  // First touches of fresh anonymous memory cost microseconds per 4 KiB page: 2.4 us from
  // one thread on the machine class (a fresh mapping written once; its second write costs
  // 0.2 us a page), about 1.3 us a page of wall time where two threads fault at once
  // (rgb_to_hsv's hsv above: 8 ms for 6,000 pages a run; an edge_nms schedule whose
  // buffers per task fault, 4,400 pages a run, 5.3 ms over `--allocator pooling`).
  // Against the corpus' measured candidates (`protuner evaluate --model analytic --data
  // corpus-out/measurements.jsonl`) 2.5 us ranks best of 1.25, 2.5, 5 and 10 us.
  // Calibration fits the term's weight per app.
  double page_fault_seconds_per_byte = 2.5e-6 / 4096;
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

// Per stage node, whether its heap allocation page-faults afresh in every realization, by
// glibc's thresholds as they stand from the second run on (AnalyticModelOptions::
// page_fault_min_bytes): a block above mmap_threshold_max_bytes always; buffers at root,
// freed by the end of their connected part of the stage graph, where together they reach
// the trim threshold (twice the run's largest block, at least page_fault_min_bytes);
// buffers stored in a loop, where those freed with them at the end of each of its
// iterations do.
std::vector<bool> heap_allocations_faulting(const PipelineFeatures &features,
                                            const AnalyticModelOptions &options = {});
// Seconds per term of one stage node of an already featurized schedule (`features`
// computed for `machine`), whose heap allocation page-faults in every realization or not
// (heap_allocations_faulting).
AnalyticTerms analytic_stage_terms(const StageFeatures &stage, bool faults_each_realization,
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
