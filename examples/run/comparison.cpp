#include "run/comparison.hpp"

#include <algorithm>
#include <cmath>

#include "tensor/compare.hpp"

namespace tc {

ConfigurationResult run_partitioning(const collage::DataflowGraph<Graph>& dataflow, const collage::Partitioning& partitioning,
                                     const std::vector<Tensor>& inputs, const std::vector<Tensor>& expected,
                                     const BackendSet& backends, const DeviceSet& devices,
                                     const ComparisonOptions& options) {
  ConfigurationResult r;
  for (const collage::Candidate& part : partitioning.parts) {
    ++r.partitions[std::string(part.target)];
    if (part.cost && part.cost->is_known()) r.estimated_ms += part.cost->raw();
  }
  collage::Result<Executable> exe = Executable::compile(dataflow, partitioning, backends, devices);
  if (!exe.ok()) {
    r.error = exe.error().message;
    return r;
  }
  r.memory = exe->memory();
  collage::Result<std::vector<Tensor>> outputs = exe->run(inputs);
  if (!outputs.ok()) {
    r.error = outputs.error().message;
    return r;
  }
  r.matches = outputs->size() == expected.size();
  for (std::size_t k = 0; k < outputs->size() && k < expected.size(); ++k) {
    const Tensor& got = (*outputs)[k];
    std::string worst;
    if (!all_close(got, expected[k], options.rtol, options.atol, &worst)) {
      if (r.matches) r.mismatch = "output " + std::to_string(k) + ": " + worst;
      r.matches = false;
    }
    if (got.data.size() == expected[k].data.size()) {
      for (std::size_t i = 0; i < got.data.size(); ++i) {
        const double d = std::fabs(static_cast<double>(got.data[i]) - expected[k].data[i]);
        r.max_abs_error = std::max(r.max_abs_error, std::isnan(d) ? INFINITY : d);
      }
    }
  }
  collage::Status failure;
  collage::Measurement m = collage::measure(
      [&] {
        if (failure.ok()) failure = exe->execute();
      },
      options.timing);
  if (!failure.ok()) {
    r.error = failure.message();
    return r;
  }
  r.latency_ms = m.cost.raw() * 1e3;
  r.spread = m.spread;
  r.samples = m.samples;
  return r;
}

std::vector<ConfigurationResult> compare_configurations(const collage::DataflowGraph<Graph>& dataflow,
                                                        const std::vector<Tensor>& inputs,
                                                        const std::vector<Tensor>& expected,
                                                        const std::vector<Configuration>& configurations,
                                                        const BackendSet& backends, const DeviceSet& devices,
                                                        collage::CostOracle<Graph>& oracle,
                                                        const ComparisonOptions& options) {
  std::vector<ConfigurationResult> results;
  for (const Configuration& config : configurations) {
    collage::Result<collage::PartitionResult> partitioned =
        partition_model(dataflow, backends, config, oracle, options.partitioner);
    if (!partitioned.ok()) {
      ConfigurationResult failed;
      failed.name = config.name;
      failed.error = partitioned.error().message;
      results.push_back(std::move(failed));
      continue;
    }
    ConfigurationResult r =
        run_partitioning(dataflow, partitioned->partitioning, inputs, expected, backends, devices, options);
    r.name = config.name;
    r.partition = std::move(partitioned).value();
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace tc
