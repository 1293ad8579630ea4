import Synchronization

/// What a queued write reads, held apart from the write's closure so that the task awaiting the
/// write frees it (``PendingWrite/value()``), not the store's writer, whose time bounds a sync
/// down: freeing a page of prepared entries took about a tenth of it. A write nobody awaits
/// frees it with its last reference, which may be the writer's.
final class WriterLoan<Value: Sendable>: Sendable {
    private let slot: Mutex<Value?>

    init(_ value: Value) {
        slot = Mutex(value)
    }

    /// The value lent; read by the write before it finishes, which ``end()`` follows.
    var value: Value {
        slot.withLock { $0! }
    }

    /// Ends the loan: the value is freed here, by the caller.
    func end() {
        let value = slot.withLock { $0.take() }
        _ = value
    }
}
