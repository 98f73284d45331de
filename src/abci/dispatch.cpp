#include "abci/application.hpp"
#include <google/protobuf/descriptor.h>

#include <chrono>
#include <utility>
#include <vector>

namespace barrel::abci {

namespace {

pb::Response exception(std::string message) {
    pb::Response response;
    response.mutable_exception()->set_error(std::move(message));
    return response;
}

/// `answer`'s value moved into the Response field `mutable_field` gives, or an exception.
template <class R, class Field>
pb::Response respond(Answer<R> answer, Field mutable_field) {
    if (!answer) return exception(std::move(answer).error());
    pb::Response response;
    *(response.*mutable_field)() = std::move(answer).value();
    return response;
}

pb::Response answer(Application& app, const pb::Request& request) {
    using R = pb::Response;
    switch (request.value_case()) {
        case pb::Request::kEcho: {
            pb::Response response;
            response.mutable_echo()->set_message(request.echo().message());
            return response;
        }
        case pb::Request::kFlush: {
            pb::Response response;
            response.mutable_flush();
            return response;
        }
        case pb::Request::kInfo: return respond(app.info(request.info()), &R::mutable_info);
        case pb::Request::kInitChain:
            return respond(app.init_chain(request.init_chain()), &R::mutable_init_chain);
        case pb::Request::kQuery: return respond(app.query(request.query()), &R::mutable_query);
        case pb::Request::kCheckTx:
            return respond(app.check_tx(request.check_tx()), &R::mutable_check_tx);
        case pb::Request::kCommit: return respond(app.commit(request.commit()), &R::mutable_commit);
        case pb::Request::kListSnapshots:
            return respond(app.list_snapshots(request.list_snapshots()),
                           &R::mutable_list_snapshots);
        case pb::Request::kOfferSnapshot:
            return respond(app.offer_snapshot(request.offer_snapshot()),
                           &R::mutable_offer_snapshot);
        case pb::Request::kLoadSnapshotChunk:
            return respond(app.load_snapshot_chunk(request.load_snapshot_chunk()),
                           &R::mutable_load_snapshot_chunk);
        case pb::Request::kApplySnapshotChunk:
            return respond(app.apply_snapshot_chunk(request.apply_snapshot_chunk()),
                           &R::mutable_apply_snapshot_chunk);
        case pb::Request::kPrepareProposal:
            return respond(app.prepare_proposal(request.prepare_proposal()),
                           &R::mutable_prepare_proposal);
        case pb::Request::kProcessProposal:
            return respond(app.process_proposal(request.process_proposal()),
                           &R::mutable_process_proposal);
        case pb::Request::kExtendVote:
            return respond(app.extend_vote(request.extend_vote()), &R::mutable_extend_vote);
        case pb::Request::kVerifyVoteExtension:
            return respond(app.verify_vote_extension(request.verify_vote_extension()),
                           &R::mutable_verify_vote_extension);
        case pb::Request::kFinalizeBlock:
            return respond(app.finalize_block(request.finalize_block()),
                           &R::mutable_finalize_block);
        case pb::Request::VALUE_NOT_SET: break;
    }
    return exception("request with no known value");
}

/// The one timing point: tells `on_call` of `calls` calls of `name` on the way out, a call that
/// throws too (the server answers it with an exception, as it does an error), each with an
/// equal share of the time since it was made.
struct Report {
    const CallObserver& on_call;
    std::string_view name;
    size_t calls{1};
    std::chrono::steady_clock::time_point start{std::chrono::steady_clock::now()};
    ~Report() {
        if (!on_call || calls == 0) return;
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        for (size_t i = 0; i < calls; ++i) on_call(name, ms / static_cast<double>(calls));
    }
};

/// The names of the Request's fields by number, from its descriptor, made once.
const std::vector<std::string_view>& field_names() {
    static const std::vector<std::string_view> names = [] {
        const google::protobuf::Descriptor& d = *pb::Request::descriptor();
        std::vector<std::string_view> out;
        for (int i = 0; i < d.field_count(); ++i) {
            const google::protobuf::FieldDescriptor& field = *d.field(i);
            const auto number = static_cast<size_t>(field.number());
            if (out.size() <= number) out.resize(number + 1);
            out[number] = field.name();
        }
        return out;
    }();
    return names;
}

}  // namespace

std::string_view call_name(const pb::Request& request) noexcept {
    const auto number = static_cast<size_t>(request.value_case());
    const auto& names = field_names();
    return number < names.size() ? names[number] : std::string_view{};
}

pb::Response dispatch(Application& app, const pb::Request& request, const CallObserver& on_call) {
    const auto kind = request.value_case();
    if (!on_call || kind == pb::Request::kEcho || kind == pb::Request::kFlush ||
        kind == pb::Request::VALUE_NOT_SET)
        return answer(app, request);
    const Report report{on_call, call_name(request)};
    return answer(app, request);
}

std::vector<pb::Response> dispatch_check_txs(Application& app,
                                             std::span<const pb::Request> requests,
                                             const CallObserver& on_call) {
    std::vector<const pb::RequestCheckTx*> checks;
    checks.reserve(requests.size());
    for (const pb::Request& request : requests) checks.push_back(&request.check_tx());
    std::vector<Answer<pb::ResponseCheckTx>> answers;
    {
        const Report report{on_call, "check_tx", requests.size()};
        answers = app.check_txs(checks);
    }
    std::vector<pb::Response> responses;
    responses.reserve(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
        responses.push_back(i < answers.size()
                                ? respond(std::move(answers[i]), &pb::Response::mutable_check_tx)
                                : exception("check_txs: no answer for this request"));
    }
    return responses;
}

}  // namespace barrel::abci
