/// The dependency graph of a pipeline's stages (`from` and `after` edges).
public struct StageGraph: Sendable {
    public let stages: [StageDefinition]

    public init(stages: [StageDefinition]) {
        self.stages = stages
    }

    /// The first cycle found, as the ids along it with the first repeated at the end; `nil` when the
    /// graph is acyclic. Edges to unknown ids are ignored (they are reported separately).
    public func firstCycle() -> [String]? {
        let byId = Dictionary(stages.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var state: [String: Int] = [:]  // 1 = on the current path, 2 = done
        var path: [String] = []

        func visit(_ id: String) -> [String]? {
            state[id] = 1
            path.append(id)
            for dependency in byId[id]?.dependencies ?? [] where byId[dependency] != nil && dependency != id {
                if state[dependency] == 1 {
                    let start = path.firstIndex(of: dependency)!
                    return Array(path[start...]) + [dependency]
                }
                if state[dependency] == nil, let cycle = visit(dependency) { return cycle }
            }
            path.removeLast()
            state[id] = 2
            return nil
        }

        for stage in stages where state[stage.id] == nil {
            if let cycle = visit(stage.id) { return cycle.reversed() }
        }
        return nil
    }

    /// Stage ids in an order where every stage comes after its dependencies; ties keep file order.
    public func topologicalOrder() -> [String] {
        var remaining = stages
        var done = Set<String>()
        var order: [String] = []
        while !remaining.isEmpty {
            guard let next = remaining.firstIndex(where: { $0.dependencies.allSatisfy(done.contains) }) else { break }
            let stage = remaining.remove(at: next)
            done.insert(stage.id)
            order.append(stage.id)
        }
        return order
    }

    /// A Mermaid flowchart: solid arrows carry data (`from`), dotted arrows only order (`after`).
    public func mermaid(title: String) -> String {
        var lines = ["---", "title: \(title)", "---", "flowchart TD"]
        for stage in stages {
            lines.append("    \(Self.nodeId(stage.id))[\"\(Self.escape(stage.id))<br/><small>\(Self.escape(stage.type))</small>\"]")
        }
        for stage in stages {
            for source in stage.from { lines.append("    \(Self.nodeId(source)) --> \(Self.nodeId(stage.id))") }
            for source in stage.after where !stage.from.contains(source) {
                lines.append("    \(Self.nodeId(source)) -.-> \(Self.nodeId(stage.id))")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// A Graphviz DOT digraph with the same edges as ``mermaid(title:)``.
    public func dot(title: String) -> String {
        var lines = ["digraph \"\(Self.dotEscape(title))\" {", "    rankdir=TB;", "    node [shape=box, style=rounded];"]
        for stage in stages {
            lines.append("    \"\(Self.dotEscape(stage.id))\" [label=\"\(Self.dotEscape(stage.id))\\n\(Self.dotEscape(stage.type))\"];")
        }
        for stage in stages {
            for source in stage.from { lines.append("    \"\(Self.dotEscape(source))\" -> \"\(Self.dotEscape(stage.id))\";") }
            for source in stage.after where !stage.from.contains(source) {
                lines.append("    \"\(Self.dotEscape(source))\" -> \"\(Self.dotEscape(stage.id))\" [style=dashed];")
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    static func nodeId(_ id: String) -> String {
        "s_" + id.unicodeScalars.map { scalar in
            (scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar))) && scalar.isASCII ? String(Character(scalar)) : "_\(scalar.value)_"
        }.joined()
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\"", with: "#quot;").replacingOccurrences(of: "<", with: "#lt;")
    }

    static func dotEscape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}
