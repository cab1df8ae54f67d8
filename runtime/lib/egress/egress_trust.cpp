// SPDX-License-Identifier: Apache-2.0
#include "egress/egress_trust.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "egress/certificate_authority.hpp"
#include "rootfs/paths.hpp"

#include <fcntl.h>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace cerberus::egress {
namespace {

// Where the common distributions keep the bundle of trusted CAs clients read.
constexpr const char* bundle_paths[] = {
    "/etc/ssl/certs/ca-certificates.crt", // Debian, Ubuntu, Alpine, Arch (and OpenSSL's cert.pem links here)
    "/etc/pki/tls/certs/ca-bundle.crt",   // Fedora, RHEL, CentOS
    "/etc/ssl/cert.pem",                  // Alpine's LibreSSL, macOS-like images
};

UniqueFd open_root(const std::string& rootfs)
{
    UniqueFd root(open(rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root)
        throw_errno("opening the rootfs " + rootfs);
    return root;
}

std::string bundle_copy(const std::string& state_dir, size_t index)
{
    return trust_dir(state_dir) + "/bundle-" + std::to_string(index) + ".pem";
}

std::string credentials_list(const std::string& egress_dir)
{
    return egress_dir + "/credentials.json";
}

} // namespace

std::string trust_dir(const std::string& state_dir)
{
    return state_dir + "/egress";
}

std::vector<std::string> image_bundles(const std::string& rootfs)
{
    UniqueFd root = open_root(rootfs);
    std::vector<std::string> found;
    for (const char* path : bundle_paths) // a link there is an image's second name for a bundle: passed over
        if (paths::open_regular(root.get(), path, O_NOFOLLOW))
            found.push_back(path);
    return found;
}

EgressPlan plan_egress(const policy::Policy& policy, spec::Spec& spec, const std::string& rootfs,
                       const std::string& state_dir)
{
    EgressPlan plan;
    if (policy.allowed_http.empty())
        return plan;
    plan.bundles = image_bundles(rootfs);
    if (plan.bundles.empty())
        throw Error("policy.allowed_http: the image has none of the trust store bundles the egress proxy's CA is "
                    "added to (/etc/ssl/certs/ca-certificates.crt, /etc/pki/tls/certs/ca-bundle.crt, "
                    "/etc/ssl/cert.pem): its clients could not reach the hosts it names",
                    ENOENT);
    plan.credentials = credentials_for(read_host_config().credentials, spec.annotations);
    for (size_t i = 0; i < plan.bundles.size(); ++i)
        spec.mounts.push_back(
            {plan.bundles[i], "bind", bundle_copy(state_dir, i), {"bind", "ro", "nosuid", "nodev", "noexec"}});
    plan.environment = {"NODE_EXTRA_CA_CERTS=" + plan.bundles.front(), "REQUESTS_CA_BUNDLE=" + plan.bundles.front()};
    for (const auto& credential : plan.credentials)
        if (!credential.env.empty())
            plan.environment.push_back(credential.env + "=" + credential.placeholder);
    return plan;
}

void write_trust(const EgressPlan& plan, const std::string& rootfs, const std::string& state_dir)
{
    if (plan.bundles.empty())
        return;
    std::string dir = trust_dir(state_dir);
    files::make_dirs(dir, 0700);
    auto ca = CertificateAuthority::generate("Cerberus egress " + state_dir.substr(state_dir.rfind('/') + 1));
    ca.save(dir + "/ca.crt", dir + "/ca.key");
    std::string ca_pem = ca.cert_pem();
    UniqueFd root = open_root(rootfs);
    for (size_t i = 0; i < plan.bundles.size(); ++i) {
        UniqueFd fd = paths::open_regular(root.get(), plan.bundles[i], O_NOFOLLOW);
        std::string image_bundle = fd ? files::read_file("/proc/self/fd/" + std::to_string(fd.get())) : "";
        if (!image_bundle.empty() && image_bundle.back() != '\n')
            image_bundle += '\n';
        files::write_file_atomic(bundle_copy(state_dir, i), image_bundle + ca_pem, 0644);
    }
    nlohmann::json names = nlohmann::json::array();
    for (const auto& credential : plan.credentials)
        names.push_back(credential.name);
    files::write_file_atomic(credentials_list(dir), names.dump(), 0600);
}

std::shared_ptr<const Proxy> proxy_for(const std::string& id, uint64_t cgroup_id,
                                       const std::vector<policy::HttpRule>& rules, bool audit,
                                       const std::string& egress_dir)
{
    HostConfig config = read_host_config();
    ContainerContext context;
    context.id = id;
    context.cgroup_id = cgroup_id;
    context.rules = rules;
    context.audit = audit;
    context.ca = std::make_shared<const CertificateAuthority>(
        CertificateAuthority::load(egress_dir + "/ca.crt", egress_dir + "/ca.key"));
    context.upstream_trust = config.upstream_ca;
    auto names = nlohmann::json::parse(files::read_file(credentials_list(egress_dir))).get<std::vector<std::string>>();
    for (const auto& name : names) {
        auto it = std::find_if(config.credentials.begin(), config.credentials.end(),
                               [&](const Credential& credential) { return credential.name == name; });
        if (it != config.credentials.end())
            context.credentials.push_back(*it);
        else
            spdlog::warn("container {}: the credential {} is no longer in {}: its requests go without it", id, name,
                         host_config_path);
    }
    return std::make_shared<const Proxy>(std::move(context));
}

} // namespace cerberus::egress
