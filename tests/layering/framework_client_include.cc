// Must not compile: built with the framework layer's include roots only, it includes the HTTP
// client. The framework reaches the cluster through the SDK's ClusterApi; the implementation
// over REST (scheduler/rest_cluster_api.h) belongs to the live daemon's wiring.
#include "client/rest_client.h"
