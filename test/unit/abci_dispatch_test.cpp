// The ABCI dispatch (src/abci/dispatch.cpp), its one timing point, and BaseApplication's default
// answers, which are CometBFT's (abci/types/application.go).

#include "abci/application.hpp"
#include "metrics/node_metrics.hpp"
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace barrel::abci {
namespace {

/// A request holding the Request field `field` (an empty message of its kind).
pb::Request request_holding(const google::protobuf::FieldDescriptor& field) {
    pb::Request request;
    request.GetReflection()->MutableMessage(&request, &field);
    return request;
}

struct HeardCalls {
    std::vector<std::string> calls;
    CallObserver observer() {
        return [this](std::string_view call, double ms) {
            EXPECT_GE(ms, 0.0);
            calls.emplace_back(call);
        };
    }
};

TEST(abci_dispatch, times_each_application_call_under_its_metric_name) {
    BaseApplication app;
    HeardCalls heard;
    const google::protobuf::Descriptor& d = *pb::Request::descriptor();
    for (int i = 0; i < d.field_count(); ++i) {
        const pb::Request request = request_holding(*d.field(i));
        const pb::Response response = dispatch(app, request, heard.observer());
        EXPECT_FALSE(response.has_exception()) << d.field(i)->name();
        // The answer is of the request's kind: in CometBFT's messages, the next field number.
        EXPECT_EQ(static_cast<int>(response.value_case()),
                  static_cast<int>(request.value_case()) + 1)
            << d.field(i)->name();
    }
    // Echo and Flush are dispatch's own answers, not the application's: not timed.
    std::vector<std::string> metric_names(std::begin(metrics::kAbciCalls),
                                          std::end(metrics::kAbciCalls));
    std::sort(metric_names.begin(), metric_names.end());
    std::sort(heard.calls.begin(), heard.calls.end());
    EXPECT_EQ(heard.calls, metric_names);

    EXPECT_EQ(call_name(request_holding(*d.FindFieldByName("finalize_block"))), "finalize_block");
    EXPECT_EQ(call_name(pb::Request{}), "");
    // No observer: answered all the same.
    EXPECT_TRUE(dispatch(app, request_holding(*d.FindFieldByName("check_tx"))).has_check_tx());
}

/// Fails Commit, throws on CheckTx.
class FailingCallsApp final : public BaseApplication {
public:
    Answer<pb::ResponseCommit> commit(const pb::RequestCommit&) override {
        return unexpected(std::string{"the store failed"});
    }
    Answer<pb::ResponseCheckTx> check_tx(const pb::RequestCheckTx&) override {
        throw std::runtime_error("boom");
    }
};

TEST(abci_dispatch, a_call_that_fails_or_throws_is_timed_too) {
    FailingCallsApp app;
    HeardCalls heard;
    pb::Request commit;
    commit.mutable_commit();
    const pb::Response failed = dispatch(app, commit, heard.observer());
    ASSERT_TRUE(failed.has_exception());
    EXPECT_EQ(failed.exception().error(), "the store failed");
    pb::Request check;
    check.mutable_check_tx()->set_tx("x");
    EXPECT_THROW(dispatch(app, check, heard.observer()), std::runtime_error);
    EXPECT_EQ(heard.calls, (std::vector<std::string>{"commit", "check_tx"}));
    pb::Request none;
    EXPECT_EQ(dispatch(app, none, heard.observer()).exception().error(),
              "request with no known value");
    EXPECT_EQ(heard.calls.size(), 2u);
}

/// Answers CheckTx with the transaction's length as its code, and counts check_txs' runs.
class RunsApp final : public BaseApplication {
public:
    Answer<pb::ResponseCheckTx> check_tx(const pb::RequestCheckTx& request) override {
        if (request.tx() == "throw") throw std::runtime_error("boom");
        pb::ResponseCheckTx response;
        response.set_code(static_cast<uint32_t>(request.tx().size()));
        return response;
    }
    std::vector<Answer<pb::ResponseCheckTx>> check_txs(
        std::span<const pb::RequestCheckTx* const> requests) override {
        runs.push_back(requests.size());
        auto answers = BaseApplication::check_txs(requests);
        if (short_answer) answers.pop_back();
        return answers;
    }
    std::vector<size_t> runs;
    bool short_answer{false};
};

pb::Request check_of(const std::string& tx) {
    pb::Request request;
    request.mutable_check_tx()->set_tx(tx);
    return request;
}

TEST(abci_dispatch, a_run_of_check_tx_is_one_call_answered_in_order_and_timed_per_request) {
    RunsApp app;
    HeardCalls heard;
    const std::vector<pb::Request> run = {check_of("a"), check_of("bbb"), check_of("cc")};
    const auto responses = dispatch_check_txs(app, run, heard.observer());
    EXPECT_EQ(app.runs, (std::vector<size_t>{3}));
    ASSERT_EQ(responses.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        ASSERT_TRUE(responses[i].has_check_tx()) << i;
        EXPECT_EQ(responses[i].check_tx().code(), run[i].check_tx().tx().size());
    }
    // One observation per request, as one at a time would give: the metric counts CheckTx.
    EXPECT_EQ(heard.calls, (std::vector<std::string>(3, "check_tx")));

    // An application that answers fewer than it was asked: the rest are exceptions.
    app.short_answer = true;
    const auto short_responses = dispatch_check_txs(app, run);
    ASSERT_EQ(short_responses.size(), 3u);
    EXPECT_TRUE(short_responses[1].has_check_tx());
    EXPECT_EQ(short_responses[2].exception().error(), "check_txs: no answer for this request");

    // A run that throws is timed too, once per request, and the throw reaches the caller.
    app.short_answer = false;
    heard.calls.clear();
    const std::vector<pb::Request> throwing = {check_of("a"), check_of("throw")};
    EXPECT_THROW(dispatch_check_txs(app, throwing, heard.observer()), std::runtime_error);
    EXPECT_EQ(heard.calls, (std::vector<std::string>(2, "check_tx")));
    EXPECT_TRUE(dispatch_check_txs(app, {}, heard.observer()).empty());
}

TEST(abci_base_application, answers_as_cometbft_does) {
    BaseApplication app;
    pb::RequestPrepareProposal prepare;
    for (const char* tx : {"aaaa", "bbb", "cc", "d"}) prepare.add_txs(tx);
    prepare.set_max_tx_bytes(9);  // 4 + 3 + 2: the fourth would pass it
    const auto prepared = app.prepare_proposal(prepare).value();
    EXPECT_EQ(std::vector<std::string>(prepared.txs().begin(), prepared.txs().end()),
              (std::vector<std::string>{"aaaa", "bbb", "cc"}));
    prepare.set_max_tx_bytes(3);  // the first is already past it: none, even the later "d"
    EXPECT_EQ(app.prepare_proposal(prepare).value().txs_size(), 0);

    EXPECT_EQ(app.process_proposal({}).value().status(), pb::ResponseProcessProposal::ACCEPT);
    EXPECT_EQ(app.verify_vote_extension({}).value().status(),
              pb::ResponseVerifyVoteExtension::ACCEPT);
    pb::RequestFinalizeBlock finalize;
    finalize.add_txs("a");
    finalize.add_txs("b");
    const auto finalized = app.finalize_block(finalize).value();
    ASSERT_EQ(finalized.tx_results_size(), 2);
    for (const auto& result : finalized.tx_results()) EXPECT_EQ(result.code(), 0u);
    EXPECT_EQ(app.check_tx({}).value().code(), 0u);
    EXPECT_EQ(app.query({}).value().code(), 0u);
    EXPECT_EQ(app.offer_snapshot({}).value().result(), pb::ResponseOfferSnapshot::UNKNOWN);
    EXPECT_EQ(app.apply_snapshot_chunk({}).value().result(),
              pb::ResponseApplySnapshotChunk::UNKNOWN);
    EXPECT_EQ(app.info({}).value().last_block_height(), 0);
    EXPECT_TRUE(app.extend_vote({}).value().vote_extension().empty());
}

}  // namespace
}  // namespace barrel::abci
