extension Array {
    /// The array cut into consecutive pieces of at most `size` elements (batches of ids for `IN`
    /// lists, of records for API calls).
    public func chunked(into size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: Swift.max(1, size)).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
