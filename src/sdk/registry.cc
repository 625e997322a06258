// ksched::Registry (include/ksched/registry.h).
#include <ksched/registry.h>

namespace ksched {

void Registry::add(const std::string& name, PluginFactory factory) {
  if (!factory.decode || !factory.create) {
    throw std::invalid_argument("plugin \"" + name + "\" has no factory");
  }
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

const PluginFactory* Registry::find(std::string_view name) const {
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  out.reserve(factories_.size());
  for (const auto& [name, _] : factories_) out.push_back(name);
  return out;
}

ExtensionPoints extensionPointsOf(const Plugin& plugin) {
  ExtensionPoints out;
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((dynamic_cast<const ExtensionPointInterface<kAllExtensionPoints[I]>*>(&plugin) != nullptr
          ? void(out.add(kAllExtensionPoints[I]))
          : void()),
     ...);
  }
  (std::make_index_sequence<kNumExtensionPoints>{});
  return out;
}

}  // namespace ksched
