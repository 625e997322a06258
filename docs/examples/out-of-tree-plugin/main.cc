// my-scheduler: ksched with one more plugin. Every ksched flag works (`my-scheduler --help`);
// a --config profile enables LabelPreference by name.
#include <ksched/app.h>

#include "label_preference.h"

int main(int argc, char** argv) {
  ksched::Registry outOfTree;
  outOfTree.add(std::string(example::LabelPreference::kName), example::labelPreferenceFactory());
  return ksched::app::run(argc, argv, outOfTree);
}
