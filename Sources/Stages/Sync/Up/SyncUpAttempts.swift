import Synchronization

/// The entries a sync up has taken in this run, by soup: a target made of passes
/// (``SyncUpTarget/passes(sharing:)``) offers each entry to one pass only, so a record that failed
/// is not sent again by a later round.
public final class SyncUpAttempts: Sendable {
    private let taken = Mutex<[String: Set<Int64>]>([:])

    public init() {}

    /// The ids of `ids` not taken yet, now taken.
    public func claim(_ ids: [Int64], in soup: String) -> [Int64] {
        taken.withLock { taken in ids.filter { taken[soup, default: []].insert($0).inserted } }
    }

    /// How many entries have been taken.
    public var count: Int { taken.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}
