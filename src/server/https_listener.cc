#include "server/https_listener.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <vector>

namespace ksched::server {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kListenId = 0;
constexpr uint64_t kWakeId = 1;
constexpr size_t kReadChunk = 16 * 1024;
// A connection holding more unparsed bytes than one request may have is closed.
constexpr size_t kMaxBuffered = kMaxHeaderBytes + kMaxBodyBytes + kReadChunk;
constexpr auto kScanInterval = std::chrono::milliseconds(100);

// One connection; touched by the loop thread only, except `ssl` which a worker reads while
// the connection is kBusy (the loop leaves a busy connection alone).
struct Conn {
  enum class State { kHandshake, kReading, kBusy, kWriting };
  uint64_t id = 0;
  int fd = -1;
  SSL* ssl = nullptr;
  State state = State::kHandshake;
  Clock::time_point since;      // when it entered its state (eviction takes the oldest)
  Clock::time_point deadline;   // handshake, header, idle or write timeout
  bool requestStarted = false;  // bytes of a request arrived (the header timeout runs)
  size_t headScanned = 0;       // bytes of `in` known to hold no end of the head yet
  bool keepAlive = false;
  uint32_t interest = 0;  // epoll events registered
  bool registered = false;
  std::string in;
  std::string out;
  size_t outOff = 0;
};

struct Job {
  uint64_t connId = 0;
  httplib::Request request;
  bool headOnly = false;
  bool keepAlive = false;
};

struct Completion {
  uint64_t connId = 0;
  std::string bytes;
};

std::runtime_error sysError(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

}  // namespace

struct HttpsListener::Impl {
  // Constant after construction.
  SSL_CTX* ctx = nullptr;
  Handler handler;
  ListenerLimits limits;
  int listenFd = -1;
  int epollFd = -1;
  int wakeFd = -1;
  int port = 0;

  // Loop thread only.
  std::unordered_map<uint64_t, std::unique_ptr<Conn>> conns;
  uint64_t nextId = 2;
  Clock::time_point lastScan;

  std::atomic<bool> stopLoop{false};
  std::atomic<size_t> open{0};
  std::atomic<uint64_t> accepted{0}, evicted{0}, timedOut{0}, requests{0}, rejected{0};

  std::mutex mu;
  std::condition_variable workAvailable;
  std::condition_variable urgentAvailable;
  std::deque<Job> jobs;                 // guarded by mu
  std::deque<Job> urgentJobs;           // guarded by mu
  std::vector<Completion> completions;  // guarded by mu
  bool stopWorkers = false;             // guarded by mu

  std::jthread loopThread;
  std::vector<std::jthread> workerThreads;
  bool stopped = false;

  ~Impl() {
    for (auto& [_, c] : conns) {
      SSL_free(c->ssl);
      ::close(c->fd);
    }
    if (listenFd >= 0) ::close(listenFd);
    if (epollFd >= 0) ::close(epollFd);
    if (wakeFd >= 0) ::close(wakeFd);
    if (ctx != nullptr) SSL_CTX_free(ctx);
  }

  void wake() const {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wakeFd, &one, sizeof one);
  }

  // ---- the loop ----

  void loop() {
    pthread_setname_np(pthread_self(), "https-server");
    std::vector<epoll_event> events(256);
    lastScan = Clock::now();
    while (!stopLoop.load(std::memory_order_relaxed)) {
      const int n = ::epoll_wait(epollFd, events.data(), static_cast<int>(events.size()),
                                 static_cast<int>(kScanInterval.count()));
      if (n < 0 && errno != EINTR) {
        spdlog::error("secure serving: epoll_wait: {}", std::strerror(errno));
        break;
      }
      for (int i = 0; i < n; ++i) {
        const uint64_t id = events[static_cast<size_t>(i)].data.u64;
        if (id == kListenId) {
          acceptAll();
        } else if (id == kWakeId) {
          uint64_t count = 0;
          [[maybe_unused]] const ssize_t r = ::read(wakeFd, &count, sizeof count);
          takeCompletions();
        } else if (auto it = conns.find(id); it != conns.end()) {
          if (events[static_cast<size_t>(i)].events & EPOLLERR) {
            close(*it->second);
          } else {
            drive(*it->second);
          }
        }
      }
      if (const auto now = Clock::now(); now - lastScan >= kScanInterval) {
        expire(now);
        lastScan = now;
      }
    }
  }

  void acceptAll() {
    for (;;) {
      const int fd = ::accept4(listenFd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if ((errno == EMFILE || errno == ENFILE) && evictOne()) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
          spdlog::warn("secure serving: accept: {}", std::strerror(errno));
        }
        return;
      }
      if (conns.size() >= limits.maxConnections && !evictOne()) {
        ::close(fd);  // every connection is in the middle of a request
        continue;
      }
      const int on = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
      SSL* ssl = SSL_new(ctx);
      if (ssl == nullptr) {
        ::close(fd);
        continue;
      }
      SSL_set_fd(ssl, fd);
      SSL_set_accept_state(ssl);
      SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                            SSL_MODE_RELEASE_BUFFERS);
      auto c = std::make_unique<Conn>();
      c->id = nextId++;
      c->fd = fd;
      c->ssl = ssl;
      c->since = Clock::now();
      c->deadline = c->since + limits.headerTimeout;
      Conn& ref = *c;
      conns.emplace(c->id, std::move(c));
      open.store(conns.size(), std::memory_order_relaxed);
      accepted.fetch_add(1, std::memory_order_relaxed);
      want(ref, EPOLLIN);
    }
  }

  // Closes the connection that has waited longest without a request in progress.
  bool evictOne() {
    Conn* oldest = nullptr;
    for (auto& [_, c] : conns) {
      const bool idle = c->state == Conn::State::kHandshake ||
                        (c->state == Conn::State::kReading && c->in.empty());
      if (idle && (oldest == nullptr || c->since < oldest->since)) oldest = c.get();
    }
    if (oldest == nullptr) return false;
    evicted.fetch_add(1, std::memory_order_relaxed);
    close(*oldest);
    return true;
  }

  void expire(Clock::time_point now) {
    std::vector<uint64_t> late;
    for (const auto& [id, c] : conns) {
      if (c->state != Conn::State::kBusy && c->deadline < now) late.push_back(id);
    }
    for (uint64_t id : late) {
      timedOut.fetch_add(1, std::memory_order_relaxed);
      close(*conns.at(id));
    }
  }

  void want(Conn& c, uint32_t events) {
    if (c.registered && c.interest == events) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = c.id;
    if (::epoll_ctl(epollFd, c.registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c.fd, &ev) != 0) {
      spdlog::warn("secure serving: epoll_ctl: {}", std::strerror(errno));
    }
    c.registered = true;
    c.interest = events;
  }

  void unregister(Conn& c) {
    if (!c.registered) return;
    ::epoll_ctl(epollFd, EPOLL_CTL_DEL, c.fd, nullptr);
    c.registered = false;
  }

  void close(Conn& c) {
    const uint64_t id = c.id;
    unregister(c);
    SSL_free(c.ssl);
    ::close(c.fd);
    conns.erase(id);  // destroys c
    open.store(conns.size(), std::memory_order_relaxed);
  }

  // Waits as the last TLS call asked (`r` its result); false when the connection is done for.
  bool waitFor(Conn& c, int r) {
    switch (SSL_get_error(c.ssl, r)) {
      case SSL_ERROR_WANT_READ:
        want(c, EPOLLIN);
        return true;
      case SSL_ERROR_WANT_WRITE:
        want(c, EPOLLOUT);
        return true;
      default:
        return false;
    }
  }

  void drive(Conn& c) {
    switch (c.state) {
      case Conn::State::kHandshake: {
        ERR_clear_error();
        const int r = SSL_do_handshake(c.ssl);
        if (r != 1) {
          if (!waitFor(c, r)) close(c);
          return;
        }
        c.state = Conn::State::kReading;
        c.since = Clock::now();
        c.deadline = c.since + limits.idleTimeout;
        readAndParse(c);
        return;
      }
      case Conn::State::kReading:
        readAndParse(c);
        return;
      case Conn::State::kWriting:
        writeOut(c);
        return;
      case Conn::State::kBusy:
        return;
    }
  }

  void readAndParse(Conn& c) {
    char buf[kReadChunk];
    for (;;) {
      ERR_clear_error();
      const int r = SSL_read(c.ssl, buf, sizeof buf);
      if (r > 0) {
        c.in.append(buf, static_cast<size_t>(r));
        if (c.in.size() > kMaxBuffered) break;
        continue;
      }
      if (!waitFor(c, r)) {
        close(c);
        return;
      }
      break;
    }
    process(c);
  }

  void process(Conn& c) {
    if (c.in.empty()) return;
    if (!c.requestStarted) {
      c.requestStarted = true;
      c.deadline = Clock::now() + limits.headerTimeout;
    }
    // A head that arrives a byte at a time is searched once, not once per byte.
    const size_t from = c.headScanned < 3 ? 0 : c.headScanned - 3;
    if (c.in.size() < kMaxHeaderBytes && c.in.find("\r\n\r\n", from) == std::string::npos) {
      c.headScanned = c.in.size();
      return;
    }
    Job job;
    const ParseOutcome o = parseRequest(c.in, job.request);
    if (o.kind == ParseOutcome::kIncomplete) return;  // the body is on its way
    if (o.kind == ParseOutcome::kError) {
      answerNow(c, o.errorStatus, o.errorText);
      return;
    }
    c.in.erase(0, o.consumed);
    c.requestStarted = false;
    c.headScanned = 0;
    c.keepAlive = o.keepAlive;
    job.connId = c.id;
    job.request.ssl = c.ssl;
    job.headOnly = job.request.method == "HEAD";
    job.keepAlive = o.keepAlive;
    const bool urgent = limits.urgent && limits.urgent(job.request);
    {
      std::lock_guard lock(mu);
      std::deque<Job>& queue = urgent ? urgentJobs : jobs;
      if (queue.size() >= limits.maxQueued) {
        rejected.fetch_add(1, std::memory_order_relaxed);
      } else {
        queue.push_back(std::move(job));
        c.state = Conn::State::kBusy;
      }
    }
    if (c.state != Conn::State::kBusy) {
      answerNow(c, 503, "too many requests in progress");
      return;
    }
    requests.fetch_add(1, std::memory_order_relaxed);
    unregister(c);
    (urgent ? urgentAvailable : workAvailable).notify_one();
  }

  // Answers from the loop itself (malformed requests, a full queue) and closes afterwards.
  void answerNow(Conn& c, int status, const std::string& text) {
    httplib::Response res;
    res.status = status;
    res.set_content(text + "\n", "text/plain; charset=utf-8");
    c.keepAlive = false;
    c.in.clear();
    startWrite(c, serializeResponse(res, false, false));
  }

  void takeCompletions() {
    std::vector<Completion> done;
    {
      std::lock_guard lock(mu);
      done.swap(completions);
    }
    for (auto& d : done) {
      auto it = conns.find(d.connId);
      if (it != conns.end()) startWrite(*it->second, std::move(d.bytes));
    }
  }

  void startWrite(Conn& c, std::string bytes) {
    c.state = Conn::State::kWriting;
    c.out = std::move(bytes);
    c.outOff = 0;
    c.since = Clock::now();
    c.deadline = c.since + limits.writeTimeout;
    writeOut(c);
  }

  void writeOut(Conn& c) {
    while (c.outOff < c.out.size()) {
      ERR_clear_error();
      const size_t left = std::min<size_t>(c.out.size() - c.outOff, INT_MAX);
      const int r = SSL_write(c.ssl, c.out.data() + c.outOff, static_cast<int>(left));
      if (r > 0) {
        c.outOff += static_cast<size_t>(r);
        continue;
      }
      if (!waitFor(c, r)) close(c);
      return;
    }
    std::string().swap(c.out);
    c.outOff = 0;
    if (!c.keepAlive) {
      SSL_shutdown(c.ssl);  // close_notify, best effort
      close(c);
      return;
    }
    c.state = Conn::State::kReading;
    c.since = Clock::now();
    c.deadline = c.since + limits.idleTimeout;
    want(c, EPOLLIN);
    // A pipelined request may be buffered already (ours or TLS's).
    if (!c.in.empty() || SSL_pending(c.ssl) > 0) readAndParse(c);
  }

  // ---- workers ----

  // Serves `queue` (jobs or urgentJobs) until stopped.
  void work(std::deque<Job>& queue, std::condition_variable& available, const char* name) {
    pthread_setname_np(pthread_self(), name);
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mu);
        available.wait(lock, [&] { return stopWorkers || !queue.empty(); });
        if (stopWorkers) return;
        job = std::move(queue.front());
        queue.pop_front();
      }
      httplib::Response res;
      res.status = 200;
      try {
        handler(job.request, res);
      } catch (const std::exception& e) {
        spdlog::error("secure serving: {} {}: {}", job.request.method, job.request.path, e.what());
        res = httplib::Response();
        res.status = 500;
        res.set_content("internal error\n", "text/plain; charset=utf-8");
      }
      std::string bytes = serializeResponse(res, job.headOnly, job.keepAlive);
      {
        std::lock_guard lock(mu);
        completions.push_back({job.connId, std::move(bytes)});
      }
      wake();
    }
  }
};

std::unique_ptr<HttpsListener> HttpsListener::start(SSL_CTX* ctx, const std::string& address,
                                                    int port, Handler handler,
                                                    ListenerLimits limits) {
  auto impl = std::make_unique<Impl>();
  SSL_CTX_up_ref(ctx);
  impl->ctx = ctx;
  impl->handler = std::move(handler);
  impl->limits = limits;

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string portText = std::to_string(port);
  const int gai =
      ::getaddrinfo(address.empty() ? nullptr : address.c_str(), portText.c_str(), &hints, &res);
  if (gai != 0) {
    throw std::runtime_error("failed to listen on " + address + ":" + portText + ": " +
                             gai_strerror(gai));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addrs(res, freeaddrinfo);
  const int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw sysError("socket");
  impl->listenFd = fd;
  const int on = 1, off = 0;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (res->ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
  if (::bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    throw sysError("failed to listen on " + address + ":" + portText);
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  impl->port = bound.ss_family == AF_INET6
                   ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                   : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);

  impl->epollFd = ::epoll_create1(EPOLL_CLOEXEC);
  impl->wakeFd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl->epollFd < 0 || impl->wakeFd < 0) throw sysError("epoll");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenId;
  ::epoll_ctl(impl->epollFd, EPOLL_CTL_ADD, fd, &ev);
  ev.data.u64 = kWakeId;
  ::epoll_ctl(impl->epollFd, EPOLL_CTL_ADD, impl->wakeFd, &ev);

  Impl* raw = impl.get();
  for (int i = 0; i < std::max(1, limits.workers); ++i) {
    impl->workerThreads.emplace_back(
        [raw] { raw->work(raw->jobs, raw->workAvailable, "https-worker"); });
  }
  if (limits.urgent) {
    impl->workerThreads.emplace_back(
        [raw] { raw->work(raw->urgentJobs, raw->urgentAvailable, "https-urgent"); });
  }
  impl->loopThread = std::jthread([raw] { raw->loop(); });
  return std::unique_ptr<HttpsListener>(new HttpsListener(std::move(impl)));
}

HttpsListener::HttpsListener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpsListener::~HttpsListener() { stop(); }

void HttpsListener::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->stopLoop.store(true);
  impl_->wake();
  if (impl_->loopThread.joinable()) impl_->loopThread.join();
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopWorkers = true;
  }
  impl_->workAvailable.notify_all();
  impl_->urgentAvailable.notify_all();
  for (auto& t : impl_->workerThreads) {
    if (t.joinable()) t.join();
  }
  // No thread is left: every connection and the port close now.
  while (!impl_->conns.empty()) impl_->close(*impl_->conns.begin()->second);
  ::close(impl_->listenFd);
  impl_->listenFd = -1;
}

int HttpsListener::port() const { return impl_->port; }

HttpsListener::Stats HttpsListener::stats() const {
  Stats s;
  s.open = impl_->open.load();
  s.accepted = impl_->accepted.load();
  s.evicted = impl_->evicted.load();
  s.timedOut = impl_->timedOut.load();
  s.requests = impl_->requests.load();
  s.rejected = impl_->rejected.load();
  return s;
}

}  // namespace ksched::server
