#include "driver/configurations.hpp"

namespace tc {

std::string fallback_for(const std::string& backend, const BackendSet& backends) {
  const Backend* b = backends.find(backend);
  if (b != nullptr && b->device() == DeviceKind::cuda && backends.find(kGpuFallback) != nullptr) return kGpuFallback;
  return kCpuFallback;
}

Configuration single_backend_configuration(const std::string& backend, const BackendSet& backends) {
  Configuration c;
  c.name = backend;
  c.fallback = fallback_for(backend, backends);
  c.targets = {backend};
  if (backend != c.fallback) c.targets.push_back(c.fallback);
  c.algorithm = collage::SearchAlgorithm::greedy;
  c.single = true;
  return c;
}

std::optional<Configuration> gpu_libraries_configuration(const BackendSet& backends) {
  if (backends.find(kGpuFallback) == nullptr) return std::nullopt;
  Configuration c{"gpu-libraries", {}, collage::SearchAlgorithm::greedy, kGpuFallback, false};
  for (const char* library : {"cublas", "cudnn"}) {
    if (backends.find(library) != nullptr) c.targets.push_back(library);
  }
  if (c.targets.empty()) return std::nullopt;
  c.targets.push_back(kGpuFallback);
  return c;
}

Configuration collage_configuration(const BackendSet& backends) {
  return Configuration{"collage", backends.names(), collage::SearchAlgorithm::exact, "", false};
}

std::vector<Configuration> standard_configurations(const BackendSet& backends) {
  std::vector<Configuration> out;
  for (const std::string& name : backends.names()) out.push_back(single_backend_configuration(name, backends));
  if (std::optional<Configuration> libraries = gpu_libraries_configuration(backends)) out.push_back(*libraries);
  out.push_back(Configuration{"greedy", backends.names(), collage::SearchAlgorithm::greedy, "", false});
  out.push_back(collage_configuration(backends));
  return out;
}

collage::Result<collage::PartitionResult> partition_model(const collage::DataflowGraph<Graph>& dataflow,
                                                          const BackendSet& backends,
                                                          const Configuration& configuration,
                                                          collage::CostOracle<Graph>& oracle,
                                                          collage::PartitionerOptions options) {
  std::vector<collage::PartitionSpec<Graph>> specs;
  for (const std::string& target : configuration.targets) {
    const Backend* backend = backends.find(target);
    if (backend == nullptr) {
      return collage::Error{collage::ErrorCode::invalid_argument,
                            "configuration '" + configuration.name + "': no backend named '" + target + "'"};
    }
    specs.push_back(backend->spec());
  }
  options.algorithm = configuration.algorithm;
  return collage::partition(dataflow, specs, oracle, options);
}

}  // namespace tc
