// SPDX-License-Identifier: Apache-2.0
#pragma once
// An Actuator that records every order and its outcome. With an inner
// actuator it passes each order on (a DryRunActuator, say) and records what
// that answered; without one it acts on nothing and answers from a script:
// Done by default, or what `killOutcomes` says for a workload's kill.

#include "actuator.hpp"

#include <map>
#include <string>
#include <vector>

namespace memqos::test {

class RecordingActuator : public daemon::Actuator {
public:
    using Outcome = daemon::Outcome;
    struct Call {
        std::string what;    // "reclaim", "cancel", "cap", "cap-give-back", "kill", "destroy",
                             // "balloon", "oom-group", "oom-score", "oom-give-back", "admission"
        std::string subject; // workload, class, cgroup or "open"/"close"
        Outcome::Kind kind = Outcome::Kind::Done;
        Bytes bytes = 0;     // reclaim: asked; cap: MemoryHigh; balloon: target
    };

    explicit RecordingActuator(daemon::Actuator* inner = nullptr) : inner_(inner) {}

    std::vector<Call> calls;
    std::map<std::string, Outcome> killOutcomes; // by workload (script only)

    std::vector<Call> of(const std::string& what) const {
        std::vector<Call> out;
        for (const auto& c : calls) {
            if (c.what == what) {
                out.push_back(c);
            }
        }
        return out;
    }

    void reclaim(const daemon::ReclaimOrder& o, daemon::OutcomeFn done) override {
        const auto i = open("reclaim", o.subject, o.bytes);
        if (inner_ != nullptr) {
            inner_->reclaim(o, answer(i, std::move(done)));
            return;
        }
        answer(i, std::move(done))(Outcome::done(o.bytes));
    }
    void cancelReclaim(const std::string& cgroup) override {
        const auto i = open("cancel", cgroup, 0);
        if (inner_ != nullptr) {
            inner_->cancelReclaim(cgroup);
        }
        calls[i].kind = Outcome::Kind::Done;
    }
    void setCap(const daemon::CapOrder& o, daemon::OutcomeFn done) override {
        const auto i = open("cap", o.className, o.memoryHigh);
        if (inner_ != nullptr) {
            inner_->setCap(o, answer(i, std::move(done)));
            return;
        }
        Outcome sent = Outcome::done();
        sent.memoryHigh = o.memoryHigh;
        answer(i, std::move(done))(sent);
    }
    void giveBackCap(const daemon::CapGiveBack& o, daemon::OutcomeFn done) override {
        const auto i = open("cap-give-back", o.className, 0);
        if (inner_ != nullptr) {
            inner_->giveBackCap(o, answer(i, std::move(done)));
            return;
        }
        answer(i, std::move(done))(Outcome::done());
    }
    Outcome killCgroup(const daemon::KillOrder& o) override {
        const auto i = open("kill", o.workload, 0);
        Outcome out = Outcome::done();
        if (inner_ != nullptr) {
            out = inner_->killCgroup(o);
        } else if (auto s = killOutcomes.find(o.workload); s != killOutcomes.end()) {
            out = s->second;
        }
        calls[i].kind = out.kind;
        return out;
    }
    void destroyDomain(const daemon::KillOrder& o, daemon::OutcomeFn done) override {
        const auto i = open("destroy", o.workload, 0);
        if (inner_ != nullptr) {
            inner_->destroyDomain(o, answer(i, std::move(done)));
            return;
        }
        answer(i, std::move(done))(Outcome::done());
    }
    void moveBalloon(const daemon::BalloonOrder& o, daemon::OutcomeFn done) override {
        const auto i = open("balloon", o.workload, o.target);
        if (inner_ != nullptr) {
            inner_->moveBalloon(o, answer(i, std::move(done)));
            return;
        }
        answer(i, std::move(done))(Outcome::done());
    }
    Outcome setOomGroup(const daemon::OomGroupOrder& o) override {
        const auto i = open("oom-group", o.workload, 0);
        const Outcome out = inner_ != nullptr ? inner_->setOomGroup(o) : Outcome::done();
        calls[i].kind = out.kind;
        return out;
    }
    daemon::OomScoreOutcome setOomScoreAdj(const daemon::OomScoreOrder& o) override {
        const auto i = open("oom-score", o.workload, 0);
        // The script writes nothing: no process changed.
        const auto out = inner_ != nullptr ? inner_->setOomScoreAdj(o)
                                           : daemon::OomScoreOutcome{Outcome::Kind::Done, {}};
        calls[i].kind = out.kind;
        return out;
    }
    daemon::OomScoreOutcome giveBackOomScoreAdj(const daemon::OomScoreOrder& o) override {
        const auto i = open("oom-give-back", o.workload, 0);
        const auto out = inner_ != nullptr ? inner_->giveBackOomScoreAdj(o)
                                           : daemon::OomScoreOutcome{Outcome::Kind::Done, {}};
        calls[i].kind = out.kind;
        return out;
    }
    Outcome admission(bool isOpen, std::uint32_t level) override {
        const auto i = open("admission", isOpen ? "open" : "close", level);
        const Outcome out = inner_ != nullptr ? inner_->admission(isOpen, level) : Outcome::done();
        calls[i].kind = out.kind;
        return out;
    }

private:
    std::size_t open(std::string what, std::string subject, Bytes bytes) {
        // Deferred until answered: an order still on its way shows so.
        calls.push_back(Call{std::move(what), std::move(subject), Outcome::Kind::Deferred, bytes});
        return calls.size() - 1;
    }
    daemon::OutcomeFn answer(std::size_t i, daemon::OutcomeFn done) {
        return [this, i, done = std::move(done)](Outcome o) {
            calls[i].kind = o.kind;
            done(std::move(o));
        };
    }
    daemon::Actuator* inner_;
};

} // namespace memqos::test
