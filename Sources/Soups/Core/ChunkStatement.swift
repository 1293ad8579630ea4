import GRDB

/// A statement over a chunk of values (`IN (?, …)`, a multi-row `VALUES`), prepared again only
/// when a chunk's size differs from the last one's: chunks of a long list share one statement.
struct ChunkStatement {
    private let sql: (Int) -> String
    private var prepared: (size: Int, raw: RawStatement)?

    /// - Parameter sql: the statement's SQL for a chunk of the given size.
    init(sql: @escaping (Int) -> String) {
        self.sql = sql
    }

    /// The statement for a chunk of `size` values, unbound.
    mutating func statement(_ db: Database, size: Int) throws -> RawStatement {
        if let prepared, prepared.size == size { return prepared.raw }
        let raw = try RawStatement(db, sql: sql(size))
        prepared = (size, raw)
        return raw
    }
}
