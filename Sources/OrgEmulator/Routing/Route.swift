import GRDB
import JSON

/// One endpoint: a method and a path pattern, what the request counts as, whether it writes,
/// and the handler that answers it. A new endpoint is one route and one handler.
///
/// Patterns are relative to their group, segments separated by `/`: a literal, `:name` (one
/// segment, read back with `request[name]`) or `**` (every remaining segment, `request.rest`).
struct Route: Sendable {
    /// Answers a matched request, on the engine; an `APIError` thrown becomes the answer.
    typealias Handler = @Sendable (isolated OrgEngine, RoutedRequest) throws(APIError) -> EmulatorResponse

    let method: String?
    let pattern: [Segment]
    let kind: RequestKind
    let writes: Writes
    /// Whether a Composite subrequest may take it.
    let inComposite: Bool
    let handler: Handler

    /// `method` `nil` takes any method.
    init(_ method: String?, _ pattern: String, _ kind: RequestKind, writes: Writes = .never, inComposite: Bool = false,
         _ handler: @escaping Handler) {
        self.method = method
        self.pattern = Segment.parse(pattern)
        self.kind = kind
        self.writes = writes
        self.inComposite = inComposite
        self.handler = handler
    }

    /// A segment of a pattern.
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
        case rest

        static func parse(_ pattern: String) -> [Segment] {
            pattern.split(separator: "/").map { part in
                if part == "**" { return .rest }
                if part.hasPrefix(":") { return .parameter(String(part.dropFirst())) }
                return .literal(String(part))
            }
        }
    }

    /// Whether a request asks to create, update, upsert or delete at least one record — what
    /// `/emulator/stats` counts as a write, the write faults apply to, and the request deadline
    /// rolls back whole.
    enum Writes: Sendable {
        case never
        case always
        /// Any method but GET.
        case unlessGET
        /// A Composite, batch or graph request: when any of its subrequests writes.
        case bySubrequests
        /// A Bulk ingest job's `PATCH` to `UploadComplete`: the job then writes.
        case onUploadComplete
    }

    /// The parameters and rest of `parts` when the route takes `method` and `parts`.
    func match(_ method: String, _ parts: ArraySlice<String>) -> (parameters: [String: String], rest: [String])? {
        if let expected = self.method, expected != method { return nil }
        guard let (parameters, rest, open) = Segment.match(pattern, parts), open || rest.isEmpty else { return nil }
        return (parameters, Array(rest))
    }
}

extension Route.Segment {
    /// Matches `pattern` against the start of `parts`: its parameters, the segments after it,
    /// and whether it ended in `**` (which takes them all); `nil` when `parts` do not start so.
    static func match(_ pattern: [Route.Segment], _ parts: ArraySlice<String>)
        -> (parameters: [String: String], rest: ArraySlice<String>, open: Bool)? {
        var parameters: [String: String] = [:]
        var index = parts.startIndex
        for segment in pattern {
            switch segment {
            case .rest:
                return (parameters, parts[index...], true)
            case .literal(let text):
                guard index < parts.endIndex, parts[index] == text else { return nil }
            case .parameter(let name):
                guard index < parts.endIndex else { return nil }
                parameters[name] = parts[index]
            }
            index += 1
        }
        return (parameters, parts[index...], false)
    }
}

/// A request as its handler gets it: the request, the API version of its path, the route's
/// parameters, the rest of the path under `**`, who sent it once authenticated, and the
/// transaction it runs in — its request scope, handed on explicitly to what it calls.
struct RoutedRequest {
    var request: EmulatorRequest
    /// `62.0` under `/services/data/v62.0/…` (or `/services/async/62.0/…`); empty elsewhere.
    var version: String
    var parameters: [String: String]
    var rest: [String]
    /// The path's segments under the group (`sobjects/Account/001…`).
    var parts: [String]
    /// The user of the request's token, set by authentication.
    var username: String?
    /// The open transaction the request runs in: a write request's (the deadline transaction),
    /// or the Composite's a subrequest belongs to; `nil` when it opens its own.
    var database: Database?

    /// A parameter of the route's pattern.
    subscript(_ name: String) -> String { parameters[name] ?? "" }
}
