// The ksched daemon as a library call: a custom scheduler binary is a main() that registers its
// plugins and hands them to run(), like kube-scheduler's
// app.NewSchedulerCommand(app.WithPlugin(name, factory)):
//
//   int main(int argc, char** argv) {
//     ksched::Registry mine;
//     mine.add(myplugin::kName, myplugin::New);
//     return ksched::app::run(argc, argv, mine);
//   }
//
// The binary then takes every flag ksched takes (`--help`), and a --config profile enables the
// plugins by name like any in-tree one.
#pragma once

#include <ksched/registry.h>

namespace ksched::app {

// Runs the scheduler until SIGTERM/SIGINT (exit 0), a fatal error or a lost Lease (exit 1).
// The registry is the in-tree plugins plus `outOfTree`; a name in both is an error (exit 1).
// Call it once, from the main thread, before any other thread is started.
[[nodiscard]] int run(int argc, char** argv, const Registry& outOfTree = {});

}  // namespace ksched::app
