#pragma once
/// Collective and point-to-point communication cost: the alpha-beta model (latency per step plus
/// bytes over per-direction bandwidth) for ring and tree all-reduce, all-gather, all-to-all and
/// p2p sends, and the choice of link (NVLink/PCIe inside a node, the network across nodes).

#include "model/deployment.hpp"
#include "model/efficiency.hpp"
#include "model/units.hpp"

namespace gpuplan::model {

/// A path between the GPUs of one communication group.
struct Link {
    BytesPerSecond bandwidth; ///< per GPU, per direction
    Seconds latency;          ///< per hop (alpha)
    bool inter_node = false;  ///< the group spans nodes
    friend bool operator==(const Link&, const Link&) = default;
};

/// Bytes each GPU sends in a ring all-reduce of a `message` held by each of n GPUs:
/// 2(n−1)/n × message (reduce-scatter then all-gather; Patarasuk & Yuan 2009). 0 for n = 1.
[[nodiscard]] Bytes ring_all_reduce_bytes(Bytes message, int n);

/// Ring all-reduce time: 2(n−1)/n × message / bandwidth + 2(n−1) × latency. 0 for n <= 1.
[[nodiscard]] Seconds ring_all_reduce_time(Bytes message, int n, BytesPerSecond bandwidth,
                                           Seconds latency);

/// Pipelined double-binary-tree all-reduce (NCCL trees, Sanders et al. 2009): reduce up and
/// broadcast down, 2 × message / bandwidth + 2⌈log2 n⌉ × latency. 0 for n <= 1.
[[nodiscard]] Seconds tree_all_reduce_time(Bytes message, int n, BytesPerSecond bandwidth,
                                           Seconds latency);

/// All-reduce with the given algorithm; Auto takes the faster of ring and tree.
[[nodiscard]] Seconds all_reduce_time(Bytes message, int n, const Link& link,
                                      AllReduceAlgorithm algorithm);

/// Ring all-gather of a `total` result (each GPU contributes total/n):
/// (n−1)/n × total / bandwidth + (n−1) × latency. 0 for n <= 1.
[[nodiscard]] Seconds all_gather_time(Bytes total, int n, const Link& link);

/// All-to-all where each GPU holds `per_gpu` bytes to scatter evenly over the group:
/// (n−1)/n × per_gpu / bandwidth + (n−1) × latency (pairwise exchange). 0 for n <= 1.
[[nodiscard]] Seconds all_to_all_time(Bytes per_gpu, int n, const Link& link);

/// One point-to-point send: latency + bytes / bandwidth.
[[nodiscard]] Seconds p2p_time(Bytes bytes, const Link& link);

/// The link of a group of `group_size` GPUs whose ranks are `stride` apart in the
/// node-major numbering (tensor parallel: stride 1; pipeline stages: stride tp). Inside one
/// node: the intra-node link. Spanning nodes: the slower of the intra-node link and the
/// network (each GPU's share of it), with the larger latency. Throws InvalidArgument when the
/// group spans nodes and the deployment has no inter-node link.
[[nodiscard]] Link group_link(const Deployment& d, int group_size, int stride);

/// The link with its bandwidth derated by the profile's communication efficiency for a
/// message of `message` bytes.
[[nodiscard]] Link effective_link(const Link& link, Bytes message, const CommEfficiency& eff);

} // namespace gpuplan::model
