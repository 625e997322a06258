// Informer<T>: a typed, thread-safe local copy of one resource kind, kept current by a
// Reflector, with add/update/delete handlers.
//
// Objects are decoded once into T (src/api/) and shared as `std::shared_ptr<const T>`; the
// JSON is dropped. An object that fails to decode is logged, counted and skipped; scheduling
// goes on with the rest.
//
// Handlers run on the reflector's thread, in event order, after the store is updated; they
// must be quick and must not call back into this informer's store while holding their own
// locks in an order that could invert. After a re-LIST (start-up, 410 Gone, apiserver restart)
// the store is diffed against the listed state: adds, updates (resourceVersion changed) and
// deletes are emitted, so handlers never miss a deletion. Adds and updates come in the order of
// the LIST (the apiserver's: by namespace and name), as client-go's DeltaFIFO hands them on; the
// scheduling queue breaks equal priorities by arrival, so this order is the order pods are tried.
#pragma once

#include <spdlog/spdlog.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ksched/api/decode.h>

#include "informer/reflector.h"

namespace ksched::informer {

template <typename T>
struct Handlers {
  std::function<void(const std::shared_ptr<const T>&)> onAdd;
  std::function<void(const std::shared_ptr<const T>& oldObj,
                     const std::shared_ptr<const T>& newObj)>
      onUpdate;
  std::function<void(const std::shared_ptr<const T>&)> onDelete;
};

template <typename T>
class Informer final : public ReflectorSink {
 public:
  using Ptr = std::shared_ptr<const T>;

  Informer(client::RestClient& client, ResourceDef def, Reflector::Options options = {})
      : reflector_(client, std::move(def), *this, options) {}
  ~Informer() override { stop(); }

  // Register before start(). Not thread-safe against running events.
  void addHandlers(Handlers<T> h) { handlers_.push_back(std::move(h)); }

  void start() { reflector_.start(); }
  void stop() { reflector_.stop(); }
  [[nodiscard]] bool hasSynced() const { return reflector_.hasSynced(); }
  bool waitForSync(std::chrono::milliseconds timeout) { return reflector_.waitForSync(timeout); }
  [[nodiscard]] Reflector::Stats stats() const { return reflector_.stats(); }
  [[nodiscard]] uint64_t decodeErrors() const { return decodeErrors_.load(); }
  [[nodiscard]] std::string lastResourceVersion() const { return reflector_.lastResourceVersion(); }

  // Store reads; safe from any thread.
  [[nodiscard]] Ptr get(const std::string& key) const {
    std::shared_lock lock(mu_);
    auto it = items_.find(key);
    return it == items_.end() ? nullptr : it->second;
  }
  [[nodiscard]] std::vector<Ptr> list() const {
    std::shared_lock lock(mu_);
    std::vector<Ptr> out;
    out.reserve(items_.size());
    for (const auto& [k, v] : items_) out.push_back(v);
    return out;
  }
  [[nodiscard]] size_t size() const {
    std::shared_lock lock(mu_);
    return items_.size();
  }

  // One whole LIST at once (beginList, one page, endList).
  void replace(std::vector<nlohmann::json>&& items, const std::string& rv) {
    beginList();
    listPage(std::move(items));
    endList(rv);
  }

  // A paged LIST: each page is decoded as it arrives, so only one page is ever held as JSON.
  void beginList() override {
    listed_.clear();
    listedOrder_.clear();
  }
  void listPage(std::vector<nlohmann::json>&& items) override {
    for (auto& j : items) {
      if (Ptr p = decodeOrLog(j)) {
        std::string key = p->metadata.key();
        if (listed_.insert_or_assign(key, std::move(p)).second) {
          listedOrder_.push_back(std::move(key));
        }
      }
      j = nullptr;
    }
  }
  void endList(const std::string& /*rv*/) override {
    std::unordered_map<std::string, Ptr> fresh = std::exchange(listed_, {});
    const std::vector<std::string> order = std::exchange(listedOrder_, {});
    std::vector<Ptr> added;
    std::vector<std::pair<Ptr, Ptr>> updated;
    std::vector<Ptr> deleted;
    {
      std::unique_lock lock(mu_);
      for (const auto& key : order) {
        const Ptr& obj = fresh.at(key);
        auto it = items_.find(key);
        if (it == items_.end()) {
          added.push_back(obj);
        } else if (it->second->metadata.resourceVersion != obj->metadata.resourceVersion ||
                   it->second->metadata.uid != obj->metadata.uid) {
          updated.emplace_back(it->second, obj);
        }
      }
      for (const auto& [key, obj] : items_) {
        if (!fresh.contains(key)) deleted.push_back(obj);
      }
      items_ = std::move(fresh);
    }
    for (const auto& obj : deleted) notifyDelete(obj);
    for (const auto& obj : added) notifyAdd(obj);
    for (const auto& [o, n] : updated) notifyUpdate(o, n);
  }

  void apply(client::WatchEventType type, nlohmann::json&& object) override {
    if (type == client::WatchEventType::kDeleted) {
      Ptr obj = decodeOrLog(object);
      std::string key = obj ? obj->metadata.key() : keyOnly(object);
      if (key.empty()) return;
      Ptr old;
      {
        std::unique_lock lock(mu_);
        auto it = items_.find(key);
        if (it == items_.end()) return;
        old = std::move(it->second);
        items_.erase(it);
      }
      notifyDelete(obj ? obj : old);
      return;
    }
    Ptr obj = decodeOrLog(object);
    if (!obj) return;
    Ptr old;
    {
      std::unique_lock lock(mu_);
      auto& slot = items_[obj->metadata.key()];
      old = std::exchange(slot, obj);
    }
    if (old) {
      notifyUpdate(old, obj);
    } else {
      notifyAdd(obj);
    }
  }

 private:
  Ptr decodeOrLog(const nlohmann::json& j) {
    try {
      return std::make_shared<const T>(api::decode<T>(j));
    } catch (const api::DecodeError& e) {
      decodeErrors_.fetch_add(1);
      spdlog::warn("informer {}: skipping malformed object {}: {}", reflector_.def().kind,
                   keyOnly(j), e.what());
      return nullptr;
    }
  }

  static std::string keyOnly(const nlohmann::json& j) {
    try {
      return api::decode<api::ObjectMeta>(j.at("metadata")).key();
    } catch (const std::exception&) {
      return "";
    }
  }

  void notifyAdd(const Ptr& obj) {
    for (auto& h : handlers_) {
      if (h.onAdd) h.onAdd(obj);
    }
  }
  void notifyUpdate(const Ptr& o, const Ptr& n) {
    for (auto& h : handlers_) {
      if (h.onUpdate) h.onUpdate(o, n);
    }
  }
  void notifyDelete(const Ptr& obj) {
    for (auto& h : handlers_) {
      if (h.onDelete) h.onDelete(obj);
    }
  }

  std::vector<Handlers<T>> handlers_;  // constant after start()
  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, Ptr> items_;   // guarded by mu_
  std::unordered_map<std::string, Ptr> listed_;  // a LIST being paged in (reflector thread)
  std::vector<std::string> listedOrder_;         // listed_'s keys in the LIST's order
  std::atomic<uint64_t> decodeErrors_{0};
  Reflector reflector_;  // last: its thread stops before the members above go away
};

}  // namespace ksched::informer
