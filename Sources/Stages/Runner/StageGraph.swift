/// The dependency graph of a pipeline's stages (`from` and `after` edges).
public struct StageGraph: Sendable {
    public let stages: [StageDefinition]

    public init(stages: [StageDefinition]) {
        self.stages = stages
    }

    /// The first cycle found, as the ids along it with the first repeated at the end; `nil` when the
    /// graph is acyclic. Edges to unknown ids are ignored (they are reported separately). Iterative,
    /// so a pipeline of any size is checked without exhausting the stack.
    public func firstCycle() -> [String]? {
        let byId = Dictionary(stages.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var state: [String: Int] = [:]  // 1 = on the current path, 2 = done
        var path: [String] = []
        // Each frame: a stage on the path and the index of the next dependency to look at.
        var frames: [(id: String, next: Int)] = []

        for stage in stages where state[stage.id] == nil {
            state[stage.id] = 1
            path.append(stage.id)
            frames.append((stage.id, 0))
            while let frame = frames.last {
                let dependencies = byId[frame.id]?.dependencies ?? []
                guard frame.next < dependencies.count else {
                    frames.removeLast()
                    path.removeLast()
                    state[frame.id] = 2
                    continue
                }
                frames[frames.count - 1].next += 1
                let dependency = dependencies[frame.next]
                guard byId[dependency] != nil, dependency != frame.id else { continue }
                if state[dependency] == 1, let start = path.firstIndex(of: dependency) {
                    return (Array(path[start...]) + [dependency]).reversed()
                }
                if state[dependency] == nil {
                    state[dependency] = 1
                    path.append(dependency)
                    frames.append((dependency, 0))
                }
            }
        }
        return nil
    }

    /// Stage ids in an order where every stage comes after its dependencies; ties keep file order.
    /// Stages on a cycle (reported by ``firstCycle()``) are left out.
    public func topologicalOrder() -> [String] {
        let index = Dictionary(stages.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        var waitingOn = [Int](repeating: 0, count: stages.count)
        var dependants = [[Int]](repeating: [], count: stages.count)
        for (position, stage) in stages.enumerated() {
            for dependency in Set(stage.dependencies) {
                guard let source = index[dependency] else { waitingOn[position] = Int.max / 2; continue }
                waitingOn[position] += 1
                dependants[source].append(position)
            }
        }
        var ready = MinHeap(stages.indices.filter { waitingOn[$0] == 0 })
        var order: [String] = []
        while let next = ready.popMin() {
            order.append(stages[next].id)
            for dependant in dependants[next] {
                waitingOn[dependant] -= 1
                if waitingOn[dependant] == 0 { ready.insert(dependant) }
            }
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

/// A binary min-heap of positions, so the topological order takes the earliest ready stage in
/// file order in logarithmic time.
private struct MinHeap {
    private var items: [Int] = []

    init(_ values: [Int]) {
        for value in values { insert(value) }
    }

    mutating func insert(_ value: Int) {
        items.append(value)
        var child = items.count - 1
        while child > 0, items[(child - 1) / 2] > items[child] {
            items.swapAt(child, (child - 1) / 2)
            child = (child - 1) / 2
        }
    }

    mutating func popMin() -> Int? {
        guard let first = items.first else { return nil }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < items.count, items[left] < items[smallest] { smallest = left }
            if right < items.count, items[right] < items[smallest] { smallest = right }
            if smallest == parent { return first }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
