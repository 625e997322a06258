// What `ksched simulate` and `ksched advise` share on their command lines: the cluster they read
// (-f files or --kubeconfig), files read whole, numbers checked, and the objects skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "sim/cluster.h"

namespace ksched::app {

// The whole file ("-": stdin); throws std::runtime_error ("<path>: cannot be read").
[[nodiscard]] std::string readAll(const std::string& path);

// `s` as a whole integer in [min, max].
[[nodiscard]] bool parseInt(const std::string& s, int64_t min, int64_t max, int64_t& out);

// Reads a command line: each argument goes to `onSwitch` first, which returns true when it took
// it (and sets `stop` when the rest is not to be read: --help); else "--name=value" or "name
// value" for a name of `withValue` goes to `onValue`; anything else is an error in `errors`
// ("unknown flag: --x", "unexpected argument: x", "--name: needs a value").
void readFlags(
    const std::vector<std::string>& args, const std::set<std::string>& withValue,
    const std::function<bool(const std::string& arg, bool& stop)>& onSwitch,
    const std::function<void(const std::string& name, const std::string& value)>& onValue,
    std::vector<std::string>& errors);

// The cluster of --kubeconfig (LISTed, as `userAgent`; "" for none) and of each of `files`.
[[nodiscard]] sim::Cluster readCluster(const std::string& kubeconfig,
                                       const std::vector<std::string>& files,
                                       const std::string& userAgent);

// "skipped: <source>: <object> <field>: <message>" on stderr for each of skipped[from...].
void printSkipped(const std::vector<sim::Skipped>& skipped, size_t from = 0);

}  // namespace ksched::app
