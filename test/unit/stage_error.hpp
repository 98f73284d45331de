#pragma once
// Test-only: the error of a block the pipeline refused, checked to come from the stage expected.

#include <barrel/pipeline/pipeline.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <variant>

namespace barrel::test {

/// The stage error of `r`, which must have failed at `stage` with an error of type E.
template <class E, class T>
E stage_error(const Expected<T, pipeline::PipelineError>& r, pipeline::Stage stage) {
    if (r) throw std::runtime_error("the block was accepted");
    EXPECT_EQ(r.error().stage, stage) << pipeline::describe(r.error());
    const E* e = std::get_if<E>(&r.error().error);
    if (!e) throw std::runtime_error("another error type: " + pipeline::describe(r.error()));
    return *e;
}

}  // namespace barrel::test
