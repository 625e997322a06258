// The cluster simulate reads (ksched::sim::Cluster) is part of the public API: <ksched/sim.h>.
#pragma once

#include <ksched/sim.h>
