// SPDX-License-Identifier: Apache-2.0
#pragma once
// GanetiKvm over Ganeti's pidfiles and HMP monitor sockets; the monitor is
// talked to on a worker thread (HmpMonitor blocks for up to its timeout).

#include "memqos/io/ganeti_kvm.hpp"
#include "memqos/io/hmp_monitor.hpp"

#include <boost/asio/io_context.hpp>

#include <filesystem>
#include <memory>

namespace memqos::io {

class HmpGanetiKvm final : public GanetiKvm {
public:
    explicit HmpGanetiKvm(boost::asio::io_context& io,
                          std::filesystem::path dir = "/run/ganeti/kvm-hypervisor",
                          std::filesystem::path ssconfDir = "/var/lib/ganeti");
    ~HmpGanetiKvm() override;
    HmpGanetiKvm(const HmpGanetiKvm&) = delete;
    HmpGanetiKvm& operator=(const HmpGanetiKvm&) = delete;

    std::vector<std::string> instances() const override;
    Result<std::int32_t> pid(const std::string& instance) const override;
    Result<std::int64_t> pidfileWritten(const std::string& instance) const override;
    Result<std::vector<std::string>> clusterInstances() const override;
    Result<std::vector<std::string>> clusterTags() const override;
    void balloonActual(const std::string& instance, Then<Bytes> then) override;
    void setBalloon(const std::string& instance, Bytes target, Done done) override;

    struct Worker;

private:
    std::filesystem::path socketOf(const std::string& instance) const;
    boost::asio::io_context& io_;
    std::filesystem::path dir_;
    std::filesystem::path ssconfDir_;
    HmpMonitor monitor_;
    std::unique_ptr<Worker> worker_;
};

} // namespace memqos::io
