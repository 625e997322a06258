// Informer<T>: a typed, thread-safe local copy of one resource kind, kept current by a
// Reflector, with add/update/delete handlers.
//
// Objects are decoded once into T (src/api/) and shared as `std::shared_ptr<const T>`; the
// JSON is dropped. Pods and nodes are decoded straight from the text of their watch events and
// LIST pages (api/fast_decode.h), with no JSON tree; what that path declines takes the tree's,
// so the rules below hold either way.
//
// An object the object model refuses (valid JSON, but e.g. a quantity that does not parse) is
// first read again: the watch resumes before it (a LIST reads the page again), since bytes
// corrupted on the way read differently the second time. Refused again at the same
// resourceVersion, it is malformed for good: it is kept out of the store (a version held before
// is deleted, so handlers see it go and nothing schedules it), counted, logged and handed to
// the onRefused handler (the scheduler's Warning event naming the field), and the
// resourceVersion moves on past it. Its next version that decodes comes as an add.
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
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/fast_decode.h>

#include "informer/reflector.h"

namespace ksched::informer {

// The kinds decoded straight from the text (api/fast_decode.h).
template <typename T>
inline constexpr bool kDecodedFromText =
    std::is_same_v<T, api::Pod> || std::is_same_v<T, api::Node>;

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
  // Called (on the reflector's thread) for an object refused for good: the object as served,
  // its metadata as far as it decodes, and the decoder's error, which names the field. Before
  // start().
  using RefusedHandler = std::function<void(const nlohmann::json& object,
                                            const api::ObjectMeta& meta, const std::string& error)>;
  void onRefused(RefusedHandler h) { onRefused_ = std::move(h); }

  void start() { reflector_.start(); }
  void stop() { reflector_.stop(); }
  [[nodiscard]] bool hasSynced() const { return reflector_.hasSynced(); }
  bool waitForSync(std::chrono::milliseconds timeout) { return reflector_.waitForSync(timeout); }
  [[nodiscard]] Reflector::Stats stats() const { return reflector_.stats(); }
  // Objects refused for good.
  [[nodiscard]] uint64_t decodeErrors() const { return decodeErrors_.load(); }
  // Objects read again because they did not decode the first time.
  [[nodiscard]] uint64_t rereads() const { return rereads_.load(); }
  [[nodiscard]] std::string fatalError() const { return reflector_.fatalError(); }
  [[nodiscard]] bool forbidden() const { return reflector_.forbidden(); }
  [[nodiscard]] const ResourceDef& def() const { return reflector_.def(); }
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

  // One whole LIST at once (beginList, one page, endList), the page read again as a LIST
  // would while it holds an object refused for the first time.
  void replace(std::vector<nlohmann::json>&& items, const std::string& rv) {
    beginList();
    while (!listPage(std::vector<nlohmann::json>(items))) {
    }
    endList(rv);
  }

  // A paged LIST: each page is decoded as it arrives, so only one page is ever held as JSON.
  void beginList() override {
    listed_.clear();
    listedOrder_.clear();
  }
  bool listPage(std::vector<nlohmann::json>&& items) override {
    for (auto& j : items) {
      Decoded d = decodeItem(j);
      if (d.readAgain) return false;
      if (d.obj) list(std::move(d.obj));
      j = nullptr;
    }
    return true;
  }
  // Pods and nodes: the page decoded from its text when the fast path takes it.
  std::optional<bool> listPageText(std::string_view body, std::string& continueToken,
                                   std::string& resourceVersion) override {
    if constexpr (kDecodedFromText<T>) {
      std::vector<T> items;
      if (!api::decodeListFast(body, items, continueToken, resourceVersion)) return std::nullopt;
      for (auto& item : items) {
        Ptr obj = std::make_shared<const T>(std::move(item));
        forgetRefusal(obj->metadata.key());
        list(std::move(obj));
      }
      return true;
    } else {
      return std::nullopt;
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

  bool apply(client::WatchEventType type, nlohmann::json&& object) override {
    if (type == client::WatchEventType::kDeleted) {
      // A deletion needs only the key: the object as last held goes to the handlers when the
      // deleted one does not decode.
      Ptr obj = decodeQuietly(object);
      std::string key = obj ? obj->metadata.key() : metaOnly(object).key();
      if (key.empty()) return true;
      forgetRefusal(key);
      remove(key, obj);
      return true;
    }
    Decoded d = decodeItem(object);
    if (d.readAgain) return false;
    if (d.obj) store(std::move(d.obj));
    return true;
  }

  // Pods and nodes: the event decoded from its text when the fast path takes it.
  [[nodiscard]] bool decodesText() const override { return kDecodedFromText<T>; }
  std::optional<bool> applyLine(std::string_view line, std::string& resourceVersion) override {
    if constexpr (kDecodedFromText<T>) {
      std::string type;
      T decoded;
      if (!api::decodeWatchEventFast(line, type, decoded)) return std::nullopt;
      const bool deleted = type == "DELETED";
      if (!deleted && type != "ADDED" && type != "MODIFIED") return std::nullopt;
      resourceVersion = decoded.metadata.resourceVersion;
      Ptr obj = std::make_shared<const T>(std::move(decoded));
      std::string key = obj->metadata.key();
      if (deleted) {
        if (!key.empty()) {
          forgetRefusal(key);
          remove(key, obj);
        }
      } else {
        forgetRefusal(key);
        store(std::move(obj));
      }
      return true;
    } else {
      return std::nullopt;
    }
  }

 private:
  struct Decoded {
    Ptr obj;                 // null when refused
    bool readAgain = false;  // refused for the first time: read it again before believing it
  };

  // Decodes a listed or watched object, applying the rule in the header comment to one the
  // object model refuses.
  Decoded decodeItem(const nlohmann::json& j) {
    std::string error;
    try {
      Ptr obj = std::make_shared<const T>(api::decode<T>(j));
      if (!refusedOnce_.empty()) forgetRefusal(obj->metadata.key());
      return {std::move(obj), false};
    } catch (const api::DecodeError& e) {
      error = e.what();
    }
    const api::ObjectMeta meta = metaOnly(j);
    const std::string key = meta.key();
    if (!key.empty()) {
      auto [it, first] = refusedOnce_.try_emplace(key, meta.resourceVersion);
      if (first || it->second != meta.resourceVersion) {
        it->second = meta.resourceVersion;
        rereads_.fetch_add(1);
        spdlog::info("informer {}: {} at resourceVersion {} did not decode ({}); reading it again",
                     def().kind, key, meta.resourceVersion, error);
        return {nullptr, true};
      }
      refusedOnce_.erase(it);
    }
    decodeErrors_.fetch_add(1);
    spdlog::warn(
        "informer {}: {} at resourceVersion {} is malformed and kept out of scheduling: {}",
        def().kind, key.empty() ? "an object without a name" : key, meta.resourceVersion, error);
    if (!key.empty()) remove(key, nullptr);
    if (onRefused_) onRefused_(j, meta, error);
    return {nullptr, false};
  }

  // A listed object into the LIST being paged in.
  void list(Ptr obj) {
    std::string key = obj->metadata.key();
    if (listed_.insert_or_assign(key, std::move(obj)).second)
      listedOrder_.push_back(std::move(key));
  }

  // An added or modified object into the store, then to the handlers.
  void store(Ptr obj) {
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

  Ptr decodeQuietly(const nlohmann::json& j) {
    try {
      return std::make_shared<const T>(api::decode<T>(j));
    } catch (const api::DecodeError&) {
      return nullptr;
    }
  }

  // The metadata as far as it decodes (empty when it does not).
  static api::ObjectMeta metaOnly(const nlohmann::json& j) {
    try {
      return api::decode<api::ObjectMeta>(j.at("metadata"));
    } catch (const std::exception&) {
      return {};
    }
  }

  void forgetRefusal(const std::string& key) {
    if (!refusedOnce_.empty()) refusedOnce_.erase(key);
  }

  // Takes `key` out of the store; the handlers see `deleted`, or the version held.
  void remove(const std::string& key, const Ptr& deleted) {
    Ptr old;
    {
      std::unique_lock lock(mu_);
      auto it = items_.find(key);
      if (it == items_.end()) return;
      old = std::move(it->second);
      items_.erase(it);
    }
    notifyDelete(deleted ? deleted : old);
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
  // Objects refused once, by key: the resourceVersion they were refused at (reflector thread).
  std::unordered_map<std::string, std::string> refusedOnce_;
  RefusedHandler onRefused_;  // constant after start()
  std::atomic<uint64_t> decodeErrors_{0};
  std::atomic<uint64_t> rereads_{0};
  Reflector reflector_;  // last: its thread stops before the members above go away
};

}  // namespace ksched::informer
