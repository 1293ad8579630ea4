extension Array {
    /// The array cut into consecutive pieces of at most `size` elements (batches of ids for `IN`
    /// lists, of records for API calls).
    public func chunked(into size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: Swift.max(1, size)).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}

extension Array where Element: Sendable {
    /// `map` over large arrays on two tasks (this machine's two cores), in order; small arrays are
    /// mapped in place.
    func concurrentMap<T: Sendable>(_ transform: @escaping @Sendable (Element) throws -> T) async throws -> [T] {
        guard count >= 1000 else { return try map(transform) }
        let middle = count / 2
        let first = Array(self[..<middle]), second = Array(self[middle...])
        async let head = first.map(transform)
        let tail = try second.map(transform)
        return try await head + tail
    }
}
