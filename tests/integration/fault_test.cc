// Faults a control plane really has, against real processes on loopback: kube-apiserver killed
// and restarted, frozen (SIGSTOP), its etcd lost, every connection cut mid-stream by a TCP relay,
// nodes deleted, re-created and added, ksched's HTTPS port flooded. Each case runs the ksched
// daemon through a backlog of pods while the fault happens and ends with the same checks:
//   - every pod of the case bound exactly once: bound, its nodeName never changed while it ran,
//     at most one Scheduled event per pod and naming the node the apiserver has, no more
//     successful bindings counted (scheduler_schedule_attempts_total) than pods bound;
//   - no node over its allocatable cpu, memory or pods;
//   - ksched's cache agreeing with the apiserver (pods bound, nodes, nothing left assumed);
//   - the daemon alive and its /healthz answering.
// Each case prints one line of figures ("[fault] ...") so that a run can be quoted, and leaves
// the shared cluster up and ready whether it passed or not.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cluster.h"
#include "daemon.h"
#include "https_get.h"
#include "objects.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// ---- the shared cluster ----

bool apiserverReady() {
  auto& cluster = TestCluster::get();
  httplib::SSLClient c("127.0.0.1", cluster.apiserverPort());
  c.set_ca_cert_path((cluster.dir() + "/pki/ca.crt").c_str());
  c.set_bearer_token_auth(cluster.config("admin").token.c_str());
  c.set_connection_timeout(2);
  c.set_read_timeout(5);
  auto res = c.Get("/readyz");
  return res && res->status == 200;
}

// etcd and kube-apiserver running (resumed, started again) and the apiserver ready: the end of
// every case, failed or not, since the other tests of the binary use them. Never throws.
void restoreCluster() {
  auto& cluster = TestCluster::get();
  try {
    cluster.ctl("resume-apiserver");
  } catch (const std::exception&) {
    // Not running: started below.
  }
  try {
    cluster.ctl("start-etcd");
    cluster.ctl("start-apiserver");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "restoring the cluster: " << e.what();
  }
  EXPECT_TRUE(eventually(apiserverReady, 60s)) << "the apiserver is not ready again";
}

// ---- a TCP relay between ksched and the apiserver ----

// Relays every connection accepted on 127.0.0.1:port() to 127.0.0.1:target, byte for byte (one
// thread, non-blocking sockets). cutAll() resets every relayed connection at once: both ends
// see it die mid-stream, in the middle of a watch or of a request. Connections made afterwards
// are relayed as before; while the target refuses, accepted connections are reset.
class TcpRelay {
 public:
  explicit TcpRelay(int target) : target_(target) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr = loopback(0);
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listener_, 512) != 0 || ::pipe2(wake_, O_NONBLOCK | O_CLOEXEC) != 0) {
      throw std::runtime_error("relay: cannot listen");
    }
    socklen_t len = sizeof addr;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::jthread([this](const std::stop_token& st) { run(st); });
  }
  ~TcpRelay() {
    thread_.request_stop();
    wake();
    thread_.join();
    ::close(listener_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }
  TcpRelay(const TcpRelay&) = delete;
  TcpRelay& operator=(const TcpRelay&) = delete;

  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] uint64_t accepted() const { return accepted_.load(); }

  // Resets every open relayed connection; returns how many there were.
  int cutAll() {
    std::unique_lock lock(mu_);
    const uint64_t want = ++cutsAsked_;
    wake();
    cv_.wait(lock, [&] { return cutsDone_ >= want; });
    return lastCut_;
  }

 private:
  static constexpr size_t kMaxBuffered = 1 << 20;

  struct End {
    int fd = -1;
    std::string out;         // read from the other end, still to be written here
    bool eof = false;        // this end will send nothing more
    bool shutWrite = false;  // the other end's EOF passed on
  };
  struct Pair {
    End a;  // ksched's side
    End b;  // the apiserver's side
  };

  static sockaddr_in loopback(int port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    return addr;
  }
  // Closes with an RST instead of a FIN.
  static void reset(int fd) {
    if (fd < 0) return;
    linger l{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    ::close(fd);
  }
  void wake() const { (void)!::write(wake_[1], "x", 1); }

  int connectTarget() const {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr = loopback(target_);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      return -1;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
  }

  // Moves what `from` has to say into to.out; false when the connection broke.
  static bool readInto(End& from, End& to) {
    char buf[65536];
    while (to.out.size() < kMaxBuffered) {
      ssize_t n = ::read(from.fd, buf, sizeof buf);
      if (n > 0) {
        to.out.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) {
        from.eof = true;
        return true;
      }
      return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    }
    return true;
  }
  static bool flush(End& e) {
    while (!e.out.empty()) {
      ssize_t n = ::send(e.fd, e.out.data(), e.out.size(), MSG_NOSIGNAL);
      if (n > 0) {
        e.out.erase(0, static_cast<size_t>(n));
        continue;
      }
      return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
    }
    return true;
  }
  static short interest(const End& self, const End& other) {
    short ev = 0;
    if (!self.eof && other.out.size() < kMaxBuffered) ev |= POLLIN;
    if (!self.out.empty()) ev |= POLLOUT;
    return ev;
  }
  // One direction's progress; false when the pair is broken.
  static bool pump(End& from, End& to, short fromEvents) {
    if ((fromEvents & (POLLIN | POLLHUP | POLLERR)) != 0 && !from.eof) {
      if (!readInto(from, to)) return false;
    }
    if (!flush(to)) return false;
    if (from.eof && to.out.empty() && !to.shutWrite) {
      ::shutdown(to.fd, SHUT_WR);
      to.shutWrite = true;
    }
    return true;
  }

  void run(const std::stop_token& st) {
    std::vector<std::unique_ptr<Pair>> pairs;
    std::vector<pollfd> fds;
    while (!st.stop_requested()) {
      fds.clear();
      fds.push_back({listener_, POLLIN, 0});
      fds.push_back({wake_[0], POLLIN, 0});
      for (auto& p : pairs) {
        fds.push_back({p->a.fd, interest(p->a, p->b), 0});
        fds.push_back({p->b.fd, interest(p->b, p->a), 0});
      }
      ::poll(fds.data(), fds.size(), 200);
      if ((fds[1].revents & POLLIN) != 0) {
        char buf[64];
        while (::read(wake_[0], buf, sizeof buf) > 0) {
        }
      }
      {
        std::lock_guard lock(mu_);
        if (cutsDone_ < cutsAsked_) {
          for (auto& p : pairs) {
            reset(p->a.fd);
            reset(p->b.fd);
          }
          lastCut_ = static_cast<int>(pairs.size());
          pairs.clear();
          cutsDone_ = cutsAsked_;
          cv_.notify_all();
          continue;
        }
      }
      const size_t polled = pairs.size();
      for (size_t i = 0; i < polled; ++i) {
        Pair& p = *pairs[i];
        const short ea = fds[2 + 2 * i].revents;
        const short eb = fds[3 + 2 * i].revents;
        bool ok = pump(p.a, p.b, ea) && pump(p.b, p.a, eb);
        const bool done = p.a.eof && p.b.eof && p.a.out.empty() && p.b.out.empty();
        if (!ok || done) {
          if (ok) {
            ::close(p.a.fd);
            ::close(p.b.fd);
          } else {
            reset(p.a.fd);
            reset(p.b.fd);
          }
          p.a.fd = p.b.fd = -1;
        }
      }
      std::erase_if(pairs, [](const auto& p) { return p->a.fd < 0; });
      if ((fds[0].revents & POLLIN) != 0) {
        for (int fd;
             (fd = ::accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;) {
          int up = connectTarget();
          if (up < 0) {
            reset(fd);
            continue;
          }
          auto p = std::make_unique<Pair>();
          p->a.fd = fd;
          p->b.fd = up;
          pairs.push_back(std::move(p));
          ++accepted_;
        }
      }
    }
    for (auto& p : pairs) {
      reset(p->a.fd);
      reset(p->b.fd);
    }
  }

  const int target_;
  int listener_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};
  std::atomic<uint64_t> accepted_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t cutsAsked_ = 0;  // guarded by mu_
  uint64_t cutsDone_ = 0;   // guarded by mu_
  int lastCut_ = 0;         // guarded by mu_
  std::jthread thread_;
};

// ---- a flood of connections that never finish ----

// `idle` TCP connections to 127.0.0.1:port that send nothing, and `halfOpen` that start a TLS
// handshake (the first bytes of a ClientHello announcing more) and stop. Closed on destruction.
class ConnectionFlood {
 public:
  ConnectionFlood(int port, int idle, int halfOpen) {
    // The record header announces a 512-byte handshake message; only its first bytes follow.
    static const unsigned char kPartialHello[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01,
                                                  0x00, 0x01, 0xfc, 0x03, 0x03};
    std::vector<std::pair<int, bool>> pending;  // fd, sends the partial hello
    for (int i = 0; i < idle + halfOpen; ++i) {
      int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(static_cast<uint16_t>(port));
      if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 &&
          errno != EINPROGRESS) {
        ::close(fd);
        continue;
      }
      pending.emplace_back(fd, i >= idle);
    }
    // Established within 5 s (a server that accepts nothing fills its backlog; the rest hang).
    const auto deadline = Clock::now() + 5s;
    while (!pending.empty() && Clock::now() < deadline) {
      std::vector<pollfd> fds;
      for (auto& [fd, hello] : pending) fds.push_back({fd, POLLOUT, 0});
      ::poll(fds.data(), fds.size(), 100);
      std::vector<std::pair<int, bool>> still;
      for (size_t i = 0; i < fds.size(); ++i) {
        auto [fd, hello] = pending[i];
        if (fds[i].revents == 0) {
          still.emplace_back(fd, hello);
          continue;
        }
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
          ::close(fd);
          continue;
        }
        if (hello) (void)!::send(fd, kPartialHello, sizeof kPartialHello, MSG_NOSIGNAL);
        fds_.push_back(fd);
      }
      pending.swap(still);
    }
    for (auto& [fd, hello] : pending) fds_.push_back(fd);  // still connecting: kept open too
    established_ = static_cast<int>(fds_.size() - pending.size());
  }
  ~ConnectionFlood() {
    for (int fd : fds_) ::close(fd);
  }
  ConnectionFlood(const ConnectionFlood&) = delete;
  ConnectionFlood& operator=(const ConnectionFlood&) = delete;
  [[nodiscard]] int established() const { return established_; }

 private:
  std::vector<int> fds_;
  int established_ = 0;
};

// ---- what a case watches while it runs ----

// Polls the pods of a namespace while a case runs and records every pod whose nodeName changed
// once set (bound twice). A client of its own, without retries: faults only skip polls.
class PodLedger {
 public:
  explicit PodLedger(const std::string& ns)
      : client_(TestCluster::get().config("admin"), quickOptions()), ns_(ns) {
    thread_ = std::jthread([this](const std::stop_token& st) {
      while (!st.stop_requested()) {
        poll();
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, st, 300ms, [] { return false; });
      }
    });
  }
  ~PodLedger() { stop(); }
  void stop() {
    if (!thread_.joinable()) return;
    thread_.request_stop();
    client_.abort();
    thread_.join();
  }
  [[nodiscard]] std::vector<std::string> moved() const {
    std::lock_guard lock(mu_);
    return moved_;
  }

 private:
  static client::RestClient::Options quickOptions() {
    client::RestClient::Options o;
    o.maxRetries = 0;
    o.connectTimeout = 2s;
    o.requestTimeout = 5s;
    return o;
  }
  void poll() {
    std::vector<json> items;
    try {
      items = client_.list("/api/v1/namespaces/" + ns_ + "/pods").items;
    } catch (const std::exception&) {
      return;
    }
    std::lock_guard lock(mu_);
    for (const auto& p : items) {
      const std::string uid = p["metadata"].value("uid", "");
      const std::string node = p["spec"].value("nodeName", "");
      if (node.empty()) continue;
      auto [it, inserted] = nodeOf_.try_emplace(uid, node);
      if (!inserted && it->second != node) {
        moved_.push_back(p["metadata"].value("name", "") + ": " + it->second + " -> " + node);
        it->second = node;
      }
    }
  }

  client::RestClient client_;
  const std::string ns_;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::map<std::string, std::string> nodeOf_;  // uid -> nodeName first seen; guarded by mu_
  std::vector<std::string> moved_;             // guarded by mu_
  std::jthread thread_;
};

struct Figures {
  std::string name;
  size_t pods = 0;
  size_t nodesCreated = 0;
  size_t nodesAtEnd = 0;
  int faults = 0;
  double seconds = 0;  // daemon start to every pod bound
  size_t bound = 0;
  double scheduled = -1;  // scheduler_schedule_attempts_total{result="scheduled"}
  double errors = -1;     // ... {result="error"}
  size_t conflicts = 0;   // bindings the apiserver refused (409/404), from the daemon's log
  size_t scheduledEvents = 0;
  int violations = 0;
  std::string notes;
};

// Every case fills 10 nodes with room for 48 pods each (80m of 4 cpu) with exactly as many pods:
// the last pods fit only where the cache counts every bound pod right, a pod counted twice is
// left pending and a pod not counted is one too many on its node.
constexpr int kPods = 480;
constexpr const char* kScheduler = "ksched-fault";

// A pod of the case: 80m, 64Mi, for the daemon's profile.
json casePod(const std::string& ns, const std::string& name) {
  auto p = sizedPod(ns, name, "80m");
  p["spec"]["schedulerName"] = kScheduler;
  return p;
}

// Every case: nodes, a backlog of pods, the daemon, the fault, the checks.
class FaultIntegration : public NamespacedTest {
 protected:
  // The case's namespace fault-<letter> (its pods, nodes and events are named after it), with
  // no nodes in the cluster but the case's and no events left from an earlier run.
  void begin(const std::string& letter) {
    auto& admin = TestCluster::get().admin();
    deleteAllNodes(admin);
    ns_ = useNamespace("fault-" + letter);
    try {
      admin.del("/apis/events.k8s.io/v1/namespaces/" + ns_ + "/events");
    } catch (const client::ApiError& e) {
      if (!e.isNotFound()) throw;
    }
    figures_.name =
        "(" + letter + ") " + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }

  void TearDown() override {
    restoreCluster();
    if (creator_.joinable()) creator_.join();  // a case that ended early: its pods go too
    if (daemon_) {
      daemon_->signal(SIGTERM);
      daemon_->wait(20s);
      daemon_.reset();
    }
    relay_.reset();
    NamespacedTest::TearDown();
    if (!ns_.empty()) deleteAllNodes(TestCluster::get().admin());
  }

  // Node `name`: `cpu` cpus, 16Gi, room for `pods` pods.
  void addNode(const std::string& name, const std::string& cpu = "4", int pods = 48) {
    auto n = sizedNode(name, cpu, "16Gi");
    n["status"]["capacity"]["pods"] = std::to_string(pods);
    n["status"]["allocatable"]["pods"] = std::to_string(pods);
    createRetrying("/api/v1/nodes", n);
    ++figures_.nodesCreated;
  }
  void addNodes(int n) {
    for (int i = 0; i < n; ++i) addNode(nodeName(i));
  }
  [[nodiscard]] std::string nodeName(int i) const { return ns_ + "-" + std::to_string(i); }

  // POSTs, retrying through faults until `within` has passed; 409 is success (the apiserver
  // applied an earlier try whose answer was lost).
  static void createRetrying(const std::string& path, const json& body,
                             std::chrono::seconds within = 120s) {
    const auto deadline = Clock::now() + within;
    for (;;) {
      try {
        TestCluster::get().admin().post(path, body);
        return;
      } catch (const client::ApiError& e) {
        if (e.code() == 409) return;
        if (Clock::now() > deadline) throw;
      }
      std::this_thread::sleep_for(200ms);
    }
  }

  // Pods p-<from> .. p-<to - 1>, 80m and 64Mi each, on 4 threads.
  void createPods(int from, int to) {
    parallelFor(to - from, 4, [&](int i) {
      createRetrying("/api/v1/namespaces/" + ns_ + "/pods",
                     casePod(ns_, "p-" + std::to_string(from + i)));
    });
    figures_.pods += static_cast<size_t>(to - from);
  }
  // The same on a thread of its own, while the fault happens (joined by finish()).
  void createPodsMeanwhile(int from, int to) {
    figures_.pods += static_cast<size_t>(to - from);
    creator_ = std::jthread([this, from, to] {
      try {
        parallelFor(to - from, 2, [&](int i) {
          createRetrying("/api/v1/namespaces/" + ns_ + "/pods",
                         casePod(ns_, "p-" + std::to_string(from + i)));
        });
      } catch (const std::exception& e) {
        creatorError_ = e.what();
      }
    });
  }

  // The ksched daemon as an operator runs it, with its HTTPS port and a configuration file
  // whose one profile, kScheduler, schedules the case's pods only (pods other tests left
  // pending are not its business); `kubeconfig` defaults to the scheduler identity's.
  void startDaemon(std::string kubeconfig = "") {
    if (kubeconfig.empty()) kubeconfig = TestCluster::get().kubeconfig("scheduler");
    const std::string config = TestCluster::get().dir() + "/" + ns_ + "-config.yaml";
    std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                             "kind: KubeSchedulerConfiguration\n"
                             "clientConnection:\n"
                             "  kubeconfig: "
                          << kubeconfig
                          << "\n"
                             "leaderElection:\n"
                             "  leaderElect: false\n"
                             "profiles:\n"
                             "- schedulerName: "
                          << kScheduler << "\n";
    securePort_ = freeLoopbackPort();
    daemon_ = std::make_unique<Daemon>(
        logPath(ns_), std::vector<std::string>{"--config", config, "--bind-address=127.0.0.1",
                                               "--secure-port=" + std::to_string(securePort_)});
    started_ = Clock::now();
    ledger_ = std::make_unique<PodLedger>(ns_);
    if (!daemon_->waitForLog("synced:", 60s)) {
      throw std::runtime_error("the daemon did not sync:\n" + daemon_->log());
    }
  }

  // Pods of the case bound now, as far as the apiserver answers (the last answer otherwise).
  size_t boundNow() {
    try {
      size_t n = 0;
      for (const auto& p :
           TestCluster::get().admin().list("/api/v1/namespaces/" + ns_ + "/pods").items) {
        n += p["spec"].value("nodeName", "").empty() ? 0 : 1;
      }
      lastBound_ = n;
    } catch (const std::exception&) {
    }
    return lastBound_;
  }
  // Waits until at least `n` pods are bound; false if that took longer than `within`.
  bool waitBound(size_t n, std::chrono::seconds within = 60s) {
    return eventually([&] { return boundNow() >= n; }, within);
  }

  // The checks every case ends with; prints the figures.
  void finish() {
    auto& admin = TestCluster::get().admin();
    Figures& f = figures_;
    if (creator_.joinable()) creator_.join();
    EXPECT_EQ(creatorError_, "") << "creating pods";
    ASSERT_TRUE(daemon_ != nullptr);

    // Every pod bound, once.
    f.bound = waitAllBound(admin, ns_, f.pods, 120s);
    f.seconds = secondsSince(started_);
    EXPECT_EQ(f.bound, f.pods) << tail(daemon_->log());
    f.violations += static_cast<int>(f.pods - std::min(f.bound, f.pods));
    ledger_->stop();
    for (const auto& m : ledger_->moved()) {
      ADD_FAILURE() << "nodeName changed: " << m;
      ++f.violations;
    }
    // A bound pod's status says so: no PodScheduled=False written after (or over) its binding.
    std::map<std::string, std::string> nodeOf;
    for (const auto& p : listPods(admin, ns_)) {
      nodeOf[p.metadata.name] = p.spec.nodeName;
      const auto* c = p.condition("PodScheduled");
      if (!p.spec.nodeName.empty() && c != nullptr && c->status != "True") {
        ADD_FAILURE() << p.metadata.name << " is bound to " << p.spec.nodeName
                      << " but its PodScheduled condition says " << c->status << " " << c->reason
                      << ": " << c->message;
        ++f.violations;
      }
    }
    // Scheduled events: once the recorder is done sending (stable for 2 s), at most one per
    // pod, naming the node the apiserver has. Events lost to the faults are not counted.
    std::map<std::string, std::vector<std::string>> scheduled;
    size_t last = SIZE_MAX;
    auto stableSince = Clock::now();
    const auto eventsDeadline = Clock::now() + 30s;
    while (Clock::now() < eventsDeadline) {
      scheduled = eventsByPod(admin, ns_, "Scheduled");
      size_t n = 0;
      for (const auto& [pod, notes] : scheduled) n += notes.size();
      if (n != last) {
        last = n;
        stableSince = Clock::now();
      } else if (Clock::now() - stableSince > 2s) {
        break;
      }
      std::this_thread::sleep_for(250ms);
    }
    f.scheduledEvents = scheduled.size();
    for (const auto& [pod, notes] : scheduled) {
      if (notes.size() > 1) {
        ADD_FAILURE() << pod << " has " << notes.size() << " Scheduled events";
        ++f.violations;
      }
      for (const auto& note : notes) {
        const std::string want = " to " + nodeOf[pod];
        if (nodeOf[pod].empty() || !note.ends_with(want)) {
          ADD_FAILURE() << pod << " is bound to \"" << nodeOf[pod]
                        << "\" but its event says: " << note;
          ++f.violations;
        }
      }
    }

    // No node over its allocatable.
    f.violations += expectNoNodeOvercommitted(admin);
    f.nodesAtEnd = admin.list("/api/v1/nodes").items.size();

    // The daemon: alive, /healthz answering, its counts and its cache in line with the
    // apiserver.
    const bool alive = daemon_->alive();
    EXPECT_TRUE(alive) << tail(daemon_->log());
    f.violations += alive ? 0 : 1;
    if (alive) {
      const HttpsAnswer h = httpsGet(securePort_, "/healthz", false);
      EXPECT_EQ(h.status, 200) << h.error;
      EXPECT_LT(h.took, 5s);
      f.violations += h.status == 200 && h.took < 5s ? 0 : 1;
      checkCountsAndCache();
    }
    // What went wrong on the way, as the daemon says it (the first few lines of each kind).
    const std::string log = daemon_->log();
    std::vector<std::string> said;
    size_t notScheduled = 0;
    for (size_t at = 0; at < log.size();) {
      size_t end = log.find('\n', at);
      if (end == std::string::npos) end = log.size();
      const std::string line = log.substr(at, end - at);
      at = end + 1;
      const bool refused = line.find(" refused: ") != std::string::npos;
      const bool failed = line.find(" not scheduled: ") != std::string::npos;
      f.conflicts += refused;
      notScheduled += failed;
      if ((refused && f.conflicts <= 3) || (failed && notScheduled <= 3)) said.push_back(line);
    }
    std::printf(
        "[fault] %s: %zu pods, %zu nodes (%zu created), %d faults, %.1f s; bound %zu/%zu; "
        "scheduled %.0f (error attempts %.0f, bindings refused %zu), Scheduled events for %zu "
        "pods; violations %d%s%s\n",
        f.name.c_str(), f.pods, f.nodesAtEnd, f.nodesCreated, f.faults, f.seconds, f.bound, f.pods,
        f.scheduled, f.errors, f.conflicts, f.scheduledEvents, f.violations,
        f.notes.empty() ? "" : "; ", f.notes.c_str());
    for (const auto& line : said) std::printf("[fault]     ksched: %s\n", line.c_str());
    std::fflush(stdout);
  }

  // scheduler_schedule_attempts_total{result="scheduled"} counts no more than the pods bound;
  // the cache holds every bound pod of the apiserver (all namespaces) and every node name it
  // knows (nodes, and names pods are bound to), and nothing is left assumed.
  void checkCountsAndCache() {
    auto& admin = TestCluster::get().admin();
    Figures& f = figures_;
    size_t apiBound = 0;
    std::set<std::string> nodeNames;
    for (const auto& p : admin.list("/api/v1/pods").items) {
      const std::string node = p["spec"].value("nodeName", "");
      if (node.empty()) continue;
      ++apiBound;
      nodeNames.insert(node);
    }
    for (const auto& n : admin.list("/api/v1/nodes").items) {
      nodeNames.insert(n["metadata"]["name"].get<std::string>());
    }
    std::string scrape;
    double pods = -1;
    double assumed = -1;
    double nodes = -1;
    const bool agree = eventually(
        [&] {
          scrape = httpsGet(securePort_, "/metrics").body;
          pods = metricSample(scrape, R"(scheduler_cache_size{type="pods"})");
          assumed = metricSample(scrape, R"(scheduler_cache_size{type="assumed_pods"})");
          nodes = metricSample(scrape, R"(scheduler_cache_size{type="nodes"})");
          return pods == static_cast<double>(apiBound) && assumed == 0 &&
                 nodes == static_cast<double>(nodeNames.size());
        },
        30s);
    EXPECT_TRUE(agree) << "cache: " << pods << " pods, " << assumed << " assumed, " << nodes
                       << " nodes; apiserver: " << apiBound << " pods bound, " << nodeNames.size()
                       << " node names";
    f.violations += agree ? 0 : 1;
    const std::string profile = std::string("profile=\"") + kScheduler + "\"";
    f.scheduled = metricSample(
        scrape, "scheduler_schedule_attempts_total{" + profile + R"(,result="scheduled"})");
    f.errors = metricSample(scrape,
                            "scheduler_schedule_attempts_total{" + profile + R"(,result="error"})");
    EXPECT_LE(f.scheduled, static_cast<double>(f.bound)) << "successes counted that are not bound";
    EXPECT_GT(f.scheduled, 0);
    f.violations += f.scheduled <= static_cast<double>(f.bound) ? 0 : 1;
  }

  static std::string tail(const std::string& log, size_t n = 6000) {
    return log.size() <= n ? log : "..." + log.substr(log.size() - n);
  }

  std::string ns_;
  Figures figures_;
  std::unique_ptr<TcpRelay> relay_;  // outlives the daemon that talks through it
  std::unique_ptr<Daemon> daemon_;
  int securePort_ = 0;
  Clock::time_point started_;
  std::unique_ptr<PodLedger> ledger_;
  size_t lastBound_ = 0;
  std::jthread creator_;
  std::string creatorError_;
};

// (a) kube-apiserver SIGKILLed twice while a backlog is being bound, restarted each time after
// 2 s: watches and bindings in flight die with it, pods keep arriving as soon as it is back.
TEST_F(FaultIntegration, ApiserverKilledAndRestartedDuringABacklog) {
  begin("a");
  auto& cluster = TestCluster::get();
  addNodes(10);
  createPods(0, 320);
  startDaemon();
  createPodsMeanwhile(320, kPods);
  for (size_t at : {40u, 400u}) {
    waitBound(at);
    cluster.ctl("kill-apiserver");
    ++figures_.faults;
    std::this_thread::sleep_for(2s);
    cluster.ctl("start-apiserver");
  }
  finish();
}

// (b) kube-apiserver frozen (SIGSTOP) for 8 s and then 4 s under load: connections open, nothing
// answers; ksched's /healthz answers meanwhile.
TEST_F(FaultIntegration, ApiserverUnresponsiveUnderLoad) {
  begin("b");
  auto& cluster = TestCluster::get();
  addNodes(10);
  createPods(0, 320);
  startDaemon();
  createPodsMeanwhile(320, kPods);
  for (auto [at, pause] : {std::pair{40u, 8s}, std::pair{400u, 4s}}) {
    waitBound(at);
    cluster.ctl("pause-apiserver");
    ++figures_.faults;
    std::this_thread::sleep_for(pause / 2);
    const HttpsAnswer h = httpsGet(securePort_, "/healthz", false);
    EXPECT_EQ(h.status, 200) << "while the apiserver is frozen: " << h.error;
    std::this_thread::sleep_for(pause / 2);
    cluster.ctl("resume-apiserver");
  }
  finish();
}

// (c) etcd SIGKILLed for 5 s and then 3 s while scheduling: the apiserver stays up but can
// neither write nor read through; bindings fail or hang until etcd is back on the same data.
TEST_F(FaultIntegration, EtcdLostAndBackWhileScheduling) {
  begin("c");
  auto& cluster = TestCluster::get();
  addNodes(10);
  createPods(0, 320);
  startDaemon();
  createPodsMeanwhile(320, kPods);
  for (auto [at, down] : {std::pair{40u, 5s}, std::pair{400u, 3s}}) {
    waitBound(at);
    cluster.ctl("kill-etcd");
    ++figures_.faults;
    std::this_thread::sleep_for(down);
    cluster.ctl("start-etcd");
  }
  EXPECT_TRUE(eventually(apiserverReady, 60s));
  finish();
}

// (d) ksched talks to the apiserver through a TCP relay that resets every connection every 0.7 s
// until the backlog is bound: watches and binding requests die mid-flight (a binding may have
// been applied without ksched hearing so), up to the last pods, which fit only where ksched
// counts every binding right.
TEST_F(FaultIntegration, ConnectionsCutMidStream) {
  begin("d");
  auto& cluster = TestCluster::get();
  relay_ = std::make_unique<TcpRelay>(cluster.apiserverPort());
  std::string kubeconfig = readFile(cluster.kubeconfig("scheduler"));
  const std::string server = "https://127.0.0.1:" + std::to_string(cluster.apiserverPort());
  const auto at = kubeconfig.find(server);
  ASSERT_NE(at, std::string::npos) << kubeconfig;
  kubeconfig.replace(at, server.size(), "https://127.0.0.1:" + std::to_string(relay_->port()));
  const std::string path = cluster.dir() + "/fault-relay.kubeconfig";
  std::ofstream(path) << kubeconfig;

  addNodes(10);
  createPods(0, 320);
  startDaemon(path);
  createPodsMeanwhile(320, kPods);
  waitBound(20);
  int cut = 0;
  while (figures_.faults < 40 && boundNow() < static_cast<size_t>(kPods)) {
    cut += relay_->cutAll();
    ++figures_.faults;
    std::this_thread::sleep_for(700ms);
  }
  figures_.notes =
      std::to_string(cut) + " connections cut, " + std::to_string(relay_->accepted()) + " relayed";
  finish();
}

// (e) Nodes come and go while the backlog is bound, in three rounds: one node deleted for good
// (its pods stay bound to its name), one deleted and created again at once with the same name
// (its pods count there again), one new node added. Once those pods are bound, as many more
// come as there is room left on the nodes there are: pods on the deleted nodes must take no
// room elsewhere, and those of a re-created node must not be forgotten.
TEST_F(FaultIntegration, NodesDeletedRecreatedAndAddedWhilePodsSchedule) {
  begin("e");
  auto& admin = TestCluster::get().admin();
  addNodes(10);
  createPods(0, 320);
  startDaemon();
  createPodsMeanwhile(320, 400);
  int added = 10;
  std::set<std::string> gone;
  for (size_t round = 0; round < 3; ++round) {
    waitBound(60 + 100 * round);
    const std::string deleted = nodeName(static_cast<int>(2 * round));
    const std::string back = nodeName(static_cast<int>(2 * round + 1));
    admin.del("/api/v1/nodes/" + deleted);
    admin.del("/api/v1/nodes/" + back);
    gone.insert(deleted);
    std::this_thread::sleep_for(300ms);
    addNode(back);
    addNode(nodeName(added++));
    figures_.faults += 3;
  }
  // Once what was created is bound (bindings queued for a deleted node land there too), the
  // room left is known exactly.
  creator_.join();
  EXPECT_EQ(waitAllBound(admin, ns_, figures_.pods, 60s), figures_.pods);
  size_t onGone = 0;
  for (const auto& p : listPods(admin, ns_)) onGone += gone.contains(p.spec.nodeName);
  const size_t room = 48 * admin.list("/api/v1/nodes").items.size();
  ASSERT_GE(room + onGone, figures_.pods);
  const size_t more = room + onGone - figures_.pods;
  createPods(static_cast<int>(figures_.pods), static_cast<int>(figures_.pods + more));
  figures_.notes = std::to_string(onGone) + " pods bound to the deleted nodes, " +
                   std::to_string(more) + " pods added to fill the room left";
  finish();
}

// (f) ksched's HTTPS port flooded while it binds a backlog: 700 idle TCP connections and 300 TLS
// handshakes left half way; /healthz must still answer within 5 s, every time.
TEST_F(FaultIntegration, HttpsPortFloodedWhileScheduling) {
  begin("f");
  addNodes(10);
  createPods(0, 320);
  startDaemon();
  createPodsMeanwhile(320, kPods);
  waitBound(30);
  double worst = 0;
  int answered = 0;
  int asked = 0;
  {
    ConnectionFlood flood(securePort_, 700, 300);
    ++figures_.faults;
    for (int i = 0; i < 3; ++i) {
      const HttpsAnswer h = httpsGet(securePort_, "/healthz", false);
      ++asked;
      answered += h.status == 200 && h.took < 5s;
      worst = std::max(worst, h.took.count());
      EXPECT_EQ(h.status, 200) << "under " << flood.established() << " connections: " << h.error;
      EXPECT_LT(h.took, 5s);
      std::this_thread::sleep_for(1s);
    }
    figures_.notes = std::to_string(flood.established()) + " of 1000 connections established; " +
                     "/healthz under the flood answered " + std::to_string(answered) + "/" +
                     std::to_string(asked) + ", slowest " + std::to_string(worst).substr(0, 4) +
                     " s";
    figures_.violations += asked - answered;
  }
  finish();
}

}  // namespace
}  // namespace ksched::testing
