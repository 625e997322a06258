// Requests on the secure port as the daemon reads them: the bytes a connection sent, parsed by
// parseRequest (the listener answers a kError itself), then authenticated and authorized by
// AccessControl::check, whose reviews carry the request's token, path and user into JSON. The
// reviewer here is in memory: it writes the JSON the apiserver's reviewer would send and
// answers by the first byte of the token.
#include <memory>
#include <optional>
#include <string>

#include "server/access.h"
#include "server/http_request.h"
#include "tests/fuzz/fuzz_util.h"

using namespace ksched;
using nlohmann::json;

namespace {

class InMemoryReviewer final : public server::Reviewer {
 public:
  std::optional<server::UserInfo> reviewToken(const std::string& token, std::string& why) override {
    fuzz::dump({{"kind", "TokenReview"}, {"spec", {{"token", token}}}});
    if (token.empty() || token[0] < 'm') {
      why = "invalid token " + token;
      return std::nullopt;
    }
    server::UserInfo u;
    u.name = token;
    u.groups = {token.substr(0, 1)};
    if (token.size() > 1 && token[1] == 'm') u.groups.push_back("system:masters");
    return u;
  }
  Decision reviewAccess(const server::UserInfo& user, const std::string& verb,
                        const std::string& path) override {
    fuzz::dump({{"kind", "SubjectAccessReview"},
                {"spec",
                 {{"user", user.name},
                  {"groups", user.groups},
                  {"extra", user.extra},
                  {"nonResourceAttributes", {{"path", path}, {"verb", verb}}}}}});
    Decision d;
    d.allowed = path.size() % 2 == 0;
    d.reason = "reason for " + path;
    return d;
  }
};

server::AccessControl& accessControl() {
  static server::AccessControl* const access = [] {
    config::ServingOptions options;
    return new server::AccessControl(options, {}, std::make_shared<InMemoryReviewer>());
  }();
  return *access;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input = fuzz::asText(data, size);
  // Pipelined requests: each in turn, as the listener reads them.
  for (int i = 0; i < 8 && !input.empty(); ++i) {
    httplib::Request req;
    const server::ParseOutcome o = server::parseRequest(input, req);
    if (o.kind != server::ParseOutcome::kComplete) {
      if (o.kind == server::ParseOutcome::kError) {
        fuzz::check(o.errorStatus >= 400 && !server::reasonPhrase(o.errorStatus).empty(),
                    "an error has a status with a reason phrase");
      }
      return 0;
    }
    fuzz::check(o.consumed > 0 && o.consumed <= input.size(), "consumed within the input");
    json headers = json::array();
    for (const auto& [k, v] : req.headers) headers.push_back({k, v});
    fuzz::dump({{"method", req.method},
                {"target", req.target},
                {"path", req.path},
                {"params", req.params},
                {"headers", headers}});
    const server::AccessControl::Verdict v = accessControl().check(req, nullptr);
    fuzz::check(v.status == 200 || v.status == 401 || v.status == 403 || v.status == 503,
                "a verdict is 200, 401, 403 or 503");
    httplib::Response res;
    res.status = v.status;
    res.set_content(v.body, "application/json");
    (void)server::serializeResponse(res, req.method == "HEAD", o.keepAlive);
    input.remove_prefix(o.consumed);
  }
  return 0;
}
