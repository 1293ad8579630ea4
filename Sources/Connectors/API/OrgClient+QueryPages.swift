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

/// The pages of a query. While the consumer works on one page the next is already being fetched
/// (one page ahead, never more), so the org and the consumer work at the same time and memory
/// holds at most two pages.
public struct QueryPages: AsyncSequence, Sendable {
    public typealias Element = QueryPage

    let client: any OrgClient
    let first: OrgRequest

    /// A fetched page and the request for the one after it.
    struct Fetched: Sendable {
        var page: QueryPage
        var next: OrgRequest?
    }

    static func fetch(_ request: OrgRequest, client: any OrgClient) async throws -> Fetched {
        let page = try await client.send(request).json()
        var records: [JSONObject] = []
        for record in page["records"]?.arrayValue ?? [] {
            guard let object = record.objectValue else { continue }
            records.append(try await client.completingChildren(of: object))
        }
        var next: OrgRequest?
        if page["done"] == false, let url = page["nextRecordsUrl"]?.stringValue {
            next = OrgRequest(method: "GET", path: url, headers: request.headers, kind: "query")
        }
        return Fetched(page: QueryPage(totalSize: Int(page["totalSize"]?.integerValue ?? 0), records: records), next: next)
    }

    /// The fetch under way; cancelled when the iterator goes (a consumer that stopped early).
    final class Ahead: Sendable {
        let task: Task<Fetched, any Error>

        init(_ request: OrgRequest, client: any OrgClient) {
            task = Task { try await QueryPages.fetch(request, client: client) }
        }

        deinit {
            task.cancel()
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let client: any OrgClient
        var next: OrgRequest?
        var ahead: Ahead?

        public mutating func next() async throws -> QueryPage? {
            let fetched: Fetched
            if let ahead {
                self.ahead = nil
                fetched = try await withTaskCancellationHandler {
                    try await ahead.task.value
                } onCancel: {
                    ahead.task.cancel()
                }
            } else if let request = next {
                fetched = try await QueryPages.fetch(request, client: client)
            } else {
                return nil
            }
            next = nil
            if let following = fetched.next { ahead = Ahead(following, client: client) }
            return fetched.page
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(client: client, next: first)
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
