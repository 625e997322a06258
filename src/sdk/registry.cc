// ksched::Registry (include/ksched/registry.h).
#include <ksched/registry.h>

namespace ksched {

void Registry::add(const std::string& name, PluginFactory factory) {
  if (!factory) throw std::invalid_argument("plugin \"" + name + "\" has no factory");
  if (!factories_.emplace(name, std::move(factory)).second) {
    throw std::invalid_argument("plugin \"" + name + "\" is already registered");
  }
}

void Registry::merge(const Registry& other) {
  for (const auto& [name, _] : other.factories_) {
    if (factories_.contains(name)) {
      throw std::invalid_argument("plugin \"" + name + "\" is already registered");
    }
  }
  for (const auto& [name, factory] : other.factories_) factories_.emplace(name, factory);
}

const PluginFactory* Registry::find(const std::string& name) const {
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  out.reserve(factories_.size());
  for (const auto& [name, _] : factories_) out.push_back(name);
  return out;
}

}  // namespace ksched
