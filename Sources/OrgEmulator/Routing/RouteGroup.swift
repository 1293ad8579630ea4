/// Routes under one path prefix sharing middleware, as a Hummingbird router group: the admin
/// API, OAuth, the SOAP login, identity, the REST API under `/services/data/vNN.N`, Bulk 1.0.
struct RouteGroup: Sendable {
    let prefix: [Route.Segment]
    /// Run in order around the route's handler; ``EmulatorMiddleware/deadlineTransaction`` last.
    let middleware: [EmulatorMiddleware]
    let routes: [Route]

    init(_ prefix: String, middleware: [EmulatorMiddleware], routes: [Route]) {
        self.prefix = Route.Segment.parse(prefix)
        self.middleware = middleware
        self.routes = routes
    }

    /// The group's parameters and the segments after its prefix, when `parts` start with it.
    func match(_ parts: [String]) -> (parameters: [String: String], rest: ArraySlice<String>)? {
        Route.Segment.match(prefix, parts[...]).map { ($0.parameters, $0.rest) }
    }

    /// The first route taking `method` and `parts`.
    func route(_ method: String, _ parts: ArraySlice<String>) -> (route: Route, parameters: [String: String], rest: [String])? {
        for route in routes {
            if let (parameters, rest) = route.match(method, parts) { return (route, parameters, rest) }
        }
        return nil
    }
}

/// What runs around a route's handler, in its group's order.
enum EmulatorMiddleware: Sendable {
    /// `/emulator/*`: a token, or a local tool on loopback.
    case adminAuth
    /// Counts the request (kind, write) and applies the request faults: stall, latency, the
    /// deadline latency may carry it past, injected errors.
    case countAndFaults
    /// A valid bearer token; sets the acting user.
    case authenticate
    /// The path's API version (after `prefix`: `v62.0` under `/services/data`) is one the org serves.
    case apiVersion(prefix: String)
    /// Counts the request toward the daily limit and reports usage (`Sforce-Limit-Info`);
    /// `enforced` refuses requests past the limit.
    case dailyLimit(enforced: Bool)
    /// A committed write's answer may be dropped (the `dropAfterCommitRate` fault).
    case dropAfterCommit
    /// A write runs in one transaction that commits only inside the request deadline.
    case deadlineTransaction
}

/// A request matched to its group and route (none when only the group matched).
struct RouteMatch {
    let group: RouteGroup
    let route: Route?
    var routed: RoutedRequest
    let isWrite: Bool

    /// The stats kind: the route's, else the group's fallback.
    var kind: RequestKind { route?.kind ?? .versions }
}
