import Foundation

/// How far the org's clock is ahead of ours, from its answers' `Date` headers. A header has whole
/// seconds and was written somewhere between our send and our receipt, so each answer bounds the
/// offset from both sides; the bounds of all answers together narrow it to about the fastest
/// round trip. When a new answer disagrees with every earlier one (the org's clock was moved),
/// the estimate starts again from it. Reading the last header alone, as before, could be off by
/// a second plus the whole latency of a slow answer.
struct ServerClockEstimate: Sendable {
    private var low = Int64.min
    private var high = Int64.max

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    /// Takes in one answer: its `Date` (whole seconds, epoch ms) and when, on our clock, its
    /// request left and its answer arrived.
    mutating func observe(date: Int64, sentAt: Int64, receivedAt: Int64) {
        // The org read its clock at some instant in [sentAt, receivedAt] and saw a time in
        // [date, date + 1 s).
        let newLow = date - receivedAt
        let newHigh = date + 1000 - sentAt
        if max(low, newLow) <= min(high, newHigh) {
            low = max(low, newLow)
            high = min(high, newHigh)
        } else {
            low = newLow
            high = newHigh
        }
    }

    /// Whether any answer was taken in.
    var isKnown: Bool { low != .min }

    /// The middle of the offsets every answer so far allows (0 before any answer).
    var offset: Int64 { low == .min ? 0 : low + (high - low) / 2 }
}
