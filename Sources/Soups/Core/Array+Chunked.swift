import Foundation

extension Array {
    /// The array cut into consecutive pieces of at most `size` elements (batches of ids for `IN`
    /// lists, of records for API calls).
    public func chunked(into size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: Swift.max(1, size)).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}

extension Array where Element: Sendable {
    /// `map` over large arrays on one task per core, in order; arrays under 1,000 elements (or a
    /// single core) are mapped in place.
    func concurrentMap<T: Sendable>(_ transform: @escaping @Sendable (Element) throws -> T) async throws -> [T] {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        guard count >= 1000, cores > 1 else { return try map(transform) }
        let pieces = chunked(into: (count + cores - 1) / cores)
        return try await withThrowingTaskGroup(of: (Int, [T]).self) { group in
            for (index, piece) in pieces.enumerated() { group.addTask { (index, try piece.map(transform)) } }
            var mapped = [[T]](repeating: [], count: pieces.count)
            for try await (index, part) in group { mapped[index] = part }
            return mapped.flatMap { $0 }
        }
    }
}
