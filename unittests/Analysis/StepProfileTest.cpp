//===- StepProfileTest.cpp - a profile extrapolated in depth --------------===//
//
// The whole-plan search prices a deep model from its first one and two
// layers. The walk's sums are additive in depth and are extrapolated; the
// schedule (what communication shows beyond compute, what sends outlast a
// chunk) is applied after, to the extrapolated sums.
//
//===----------------------------------------------------------------------===//

#include "shardc/Analysis/StepEstimate.h"

#include "gtest/gtest.h"

using namespace shardc;

namespace {

/// A pipeline stage's walk of `layers` layers: each layer computes 1 s
/// forward and 2 s backward and sends nothing more; the gradients' reduction
/// (3 s in all, 1 s of it outside the layers) overlaps the backward pass.
StepProfile layersProfile(double layers) {
  StepProfile p;
  p.shared.pipelineStages = 2;
  p.shared.numDevices = 4;
  p.shared.parameters = 10 * layers;
  p.cf = 1 * layers;
  p.cb = 2 * layers;
  p.kg = 1 + 2 * layers;
  p.ff = 100 * layers;
  p.sendSeconds = 0.75;
  return p;
}

TEST(StepProfileTest, ExtrapolatesTheSumsAndSchedulesAfter) {
  StepProfile deep = extrapolateInDepth(layersProfile(1), layersProfile(2), 10);
  StepProfile exact = layersProfile(10);
  EXPECT_DOUBLE_EQ(deep.cf, exact.cf);
  EXPECT_DOUBLE_EQ(deep.cb, exact.cb);
  EXPECT_DOUBLE_EQ(deep.kg, exact.kg);
  EXPECT_DOUBLE_EQ(deep.ff, exact.ff);
  EXPECT_DOUBLE_EQ(deep.shared.parameters, exact.shared.parameters);
  // A stage boundary's send does not grow with depth.
  EXPECT_DOUBLE_EQ(deep.sendSeconds, 0.75);

  EstimateOptions options;
  options.pipelineAxis = "pipe";
  options.microbatches = 4;
  StepEstimate fromDeep = scheduleStep(deep, options);
  StepEstimate fromExact = scheduleStep(exact, options);
  EXPECT_DOUBLE_EQ(fromDeep.exposedCommunicationSeconds,
                   fromExact.exposedCommunicationSeconds);
  EXPECT_DOUBLE_EQ(fromDeep.bubbleSeconds, fromExact.bubbleSeconds);
  // At one layer the sends outlast a chunk's compute and show; at ten they
  // hide behind it. Extrapolating the estimates themselves would carry the
  // shallow models' exposed sends into the deep one with the wrong sign.
  EXPECT_GT(scheduleStep(layersProfile(1), options).exposedCommunicationSeconds,
            0.0);
  EXPECT_GE(fromDeep.exposedCommunicationSeconds, 0.0);
}

} // namespace
