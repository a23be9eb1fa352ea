#include "model/comm.hpp"

#include "model/error.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuplan::model {

Bytes ring_all_reduce_bytes(Bytes message, int n) {
    if (n <= 1) {
        return Bytes(0);
    }
    return message * (2.0 * (n - 1) / n);
}

Seconds ring_all_reduce_time(Bytes message, int n, BytesPerSecond bandwidth, Seconds latency) {
    if (n <= 1) {
        return Seconds(0);
    }
    // Reduce-scatter and all-gather, n−1 steps each, every step moving message/n per GPU.
    return ring_all_reduce_bytes(message, n) / bandwidth + latency * (2.0 * (n - 1));
}

Seconds tree_all_reduce_time(Bytes message, int n, BytesPerSecond bandwidth, Seconds latency) {
    if (n <= 1) {
        return Seconds(0);
    }
    const double depth = std::ceil(std::log2(static_cast<double>(n)));
    return message * 2.0 / bandwidth + latency * (2.0 * depth);
}

Seconds all_reduce_time(Bytes message, int n, const Link& link, AllReduceAlgorithm algorithm) {
    const Seconds ring = ring_all_reduce_time(message, n, link.bandwidth, link.latency);
    const Seconds tree = tree_all_reduce_time(message, n, link.bandwidth, link.latency);
    switch (algorithm) {
    case AllReduceAlgorithm::Ring: return ring;
    case AllReduceAlgorithm::Tree: return tree;
    case AllReduceAlgorithm::Auto: return std::min(ring, tree);
    }
    return ring;
}

Seconds all_gather_time(Bytes total, int n, const Link& link) {
    if (n <= 1) {
        return Seconds(0);
    }
    return total * (static_cast<double>(n - 1) / n) / link.bandwidth + link.latency * (n - 1);
}

Seconds all_to_all_time(Bytes per_gpu, int n, const Link& link) {
    if (n <= 1) {
        return Seconds(0);
    }
    return per_gpu * (static_cast<double>(n - 1) / n) / link.bandwidth + link.latency * (n - 1);
}

Seconds p2p_time(Bytes bytes, const Link& link) {
    return link.latency + bytes / link.bandwidth;
}

Link group_link(const Deployment& d, int group_size, int stride) {
    const InterconnectSpec& intra = d.intra_node_link;
    Link link{intra.bandwidth_per_direction, intra.latency, false};
    if (group_size <= 1) {
        return link;
    }
    const long long span = static_cast<long long>(group_size) * std::max(stride, 1);
    if (span <= d.gpus_per_node) {
        return link;
    }
    if (!d.inter_node_link) {
        throw InvalidArgument("deployment of '" + d.model.name + "': a group of " +
                              std::to_string(group_size) + " GPUs spans nodes of " +
                              std::to_string(d.gpus_per_node) +
                              " GPUs but no inter-node link is given; add one (e.g. 'ib-ndr') "
                              "or keep the group inside a node");
    }
    const InterconnectSpec& net = *d.inter_node_link;
    link.bandwidth = std::min(intra.bandwidth_per_direction, net.bandwidth_per_direction);
    link.latency = std::max(intra.latency, net.latency);
    link.inter_node = true;
    return link;
}

Link effective_link(const Link& link, Bytes message, const CommEfficiency& eff) {
    Link out = link;
    if (message.si() > 0.0) {
        out.bandwidth = link.bandwidth * eff.bandwidth.at(message.si());
    }
    return out;
}

} // namespace gpuplan::model
