import JSON
import SOQL

/// One page of a query's results, its child subquery results completed.
public struct QueryPage: Sendable {
    /// The number of records the whole query matches (from the first page on).
    public var totalSize: Int
    public var records: [JSONObject]

    public init(totalSize: Int, records: [JSONObject]) {
        self.totalSize = totalSize
        self.records = records
    }
}

/// The pages of a query, fetched one at a time as they are asked for (so a slow consumer holds
/// back the fetching, and memory holds one page).
public struct QueryPages: AsyncSequence, Sendable {
    public typealias Element = QueryPage

    let client: any OrgClient
    let first: OrgRequest

    public struct AsyncIterator: AsyncIteratorProtocol {
        let client: any OrgClient
        var next: OrgRequest?
        let headers: [(String, String)]

        public mutating func next() async throws -> QueryPage? {
            guard let request = next else { return nil }
            let page = try await client.send(request).json()
            var records: [JSONObject] = []
            for record in page["records"]?.arrayValue ?? [] {
                guard let object = record.objectValue else { continue }
                records.append(try await client.completingChildren(of: object))
            }
            if page["done"] == false, let url = page["nextRecordsUrl"]?.stringValue {
                next = OrgRequest(method: "GET", path: url, headers: headers, kind: "query")
            } else {
                next = nil
            }
            return QueryPage(totalSize: Int(page["totalSize"]?.integerValue ?? 0), records: records)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(client: client, next: first, headers: first.headers)
    }
}

extension OrgClient {
    /// The pages of a query (or `queryAll`), fetched on demand; every record carries all its children.
    public func queryPages(_ query: SOQLQuery, all: Bool = false, batchSize: Int? = nil) -> QueryPages {
        var headers: [(String, String)] = []
        if let batchSize { headers.append(("Sforce-Query-Options", "batchSize=\(min(2000, max(200, batchSize)))")) }
        return QueryPages(client: self, first: OrgRequest(method: "GET", path: apiPath + (all ? "/queryAll" : "/query"),
                                                          query: [("q", query.description)], headers: headers, kind: "query"))
    }
}
