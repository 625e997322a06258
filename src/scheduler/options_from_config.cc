#include "scheduler/options_from_config.h"

#include <chrono>

namespace ksched::scheduler {

Options optionsFromConfig(const config::SchedulerConfiguration& config,
                          const config::CommandLine& flags) {
  Options o;
  o.features = config.featureGates;
  o.profiles = config::frameworkProfiles(config);
  o.parallelism = config.parallelism;
  o.percentageOfNodesToScore = config.percentageOfNodesToScore;
  o.percentageOfPlacementsToScore = config.percentageOfPlacementsToScore;
  o.extenders = config.extenders;
  o.queue.podInitialBackoff = std::chrono::seconds(config.podInitialBackoffSeconds);
  o.queue.podMaxBackoff = std::chrono::seconds(config.podMaxBackoffSeconds);
  o.diagnosisAnnotation = flags.diagnosisAnnotation;
  o.shutdownGracePeriod =
      std::chrono::duration_cast<std::chrono::milliseconds>(flags.shutdownGracePeriod);
  return o;
}

}  // namespace ksched::scheduler
