"""The CUDA device function by which a warp walks its lanes' runs of items as one
list, 32 items a round (:data:`WARP_OWNER`): the clips' emits write their cut
cells' slots, output cells and centre terms so, the whole warp together.

Examples
--------
>>> "warp_owner" in WARP_OWNER
True
"""

WARP_OWNER = r"""
#ifndef DAXPY_WARP_OWNER
#define DAXPY_WARP_OWNER
// The lane that holds item at0 + lane of a warp's items, each lane's items
// numbering count from start (in lane order; a lane of none starts where the next
// does), with the first of that lane's items: from the lanes whose items start in
// this round of 32 (their places as bits, each place's lane staged in
// round_owner, 32 ints of the warp's own) or, before the first of those, the
// round's carry (the owner of the previous round's last item). Five dependent
// reads of a binary search over the starts were the cut cells' loops' longest
// chain. Every lane of the warp calls it, in every round.
__device__ __forceinline__ void warp_owner(int* round_owner, int start, int count, int at0,
                                           int& carry, int& carry_first, int& o,
                                           int& first) {
  const int lane = threadIdx.x & 31;
  const bool here = count > 0 && start >= at0 && start < at0 + 32;
  if (here) round_owner[start - at0] = lane;
  const unsigned starts = __reduce_or_sync(0xffffffffu, here ? 1u << (start - at0) : 0u);
  __syncwarp();
  const unsigned upto = starts & (0xffffffffu >> (31 - lane));  // places 0 to lane
  const int place = 31 - __clz(upto);
  o = upto ? round_owner[place] : carry;
  first = upto ? at0 + place : carry_first;
  carry = __shfl_sync(0xffffffffu, o, 31);
  carry_first = __shfl_sync(0xffffffffu, first, 31);
  __syncwarp();  // the next round stages its own starts
}
#endif
"""
