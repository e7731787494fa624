import Foundation
import Testing

@testable import AmbienceTestSupport

/// docs/ARCHITECTURE.md's file map (the fenced block under "## The file map") against the tree: every target in
/// Sources/ has its line, every folder the map names is a folder of its target, every Swift file of Sources/ is named in
/// it, and every `Name.swift` it names exists (in Sources/ or Demos/). So a file cannot be added, moved or removed without the map following.
@Suite struct ArchitectureMapTests {
    @Test func theMapNamesEveryTargetFolderAndFileOfTheSources() throws {
        let map = try ArchitectureMap.read()
        var findings: [String] = []
        for target in try ArchitectureMap.sourceTargets() where !map.targets.contains(target) {
            findings.append("Sources/\(target): no line of its own in the map")
        }
        for (target, folder) in map.folders
        where !ArchitectureMap.isFolder(ArchitectureMap.root + "/Sources/\(target)/\(folder)") {
            findings.append("the map's \(target) \(folder)/: Sources/\(target)/\(folder) is not a folder")
        }
        for file in try ArchitectureMap.swiftFiles(under: ["Sources"]) where !map.names(file: file) {
            findings.append("\(file): not named in the map")
        }
        let everyFile = try ArchitectureMap.swiftFiles(under: ["Sources", "Demos"])
        for named in map.namedFiles where !everyFile.contains(where: { $0.hasSuffix("/" + named) }) {
            findings.append("the map names \(named), which is not a file of Sources/ or Demos/")
        }
        #expect(findings.isEmpty, "\(findings.joined(separator: "\n"))")
    }

    /// The checker finds what it must: a target without a line, a folder that is not there, a file not named, a
    /// named file that is gone; and `X+Y.swift` counts as named by `X+Y` or by `+Y` beside `X`.
    @Test func theCheckerFindsEachBrokenShape() {
        let map = ArchitectureMap(
            block: """
                 AmbienceMixer (a target)
                   Mixer/     Mixer (the mixer), VoicePool, Gone.swift; AudioEngine: +Render, +Streams.
                """)
        #expect(map.targets == ["AmbienceMixer"])
        #expect(map.folders.map { "\($0.target)/\($0.folder)" } == ["AmbienceMixer/Mixer"])
        #expect(map.names(file: "Sources/AmbienceMixer/Mixer/VoicePool.swift"))
        #expect(!map.names(file: "Sources/AmbienceMixer/Mixer/SourcePool.swift"))
        #expect(map.names(file: "Sources/Ambience/Engine/AudioEngine+Render.swift"))
        #expect(!map.names(file: "Sources/Ambience/Engine/AudioEngine+Bytes.swift"))
        #expect(!map.names(file: "Sources/AmbienceMixer/Mixer/Voice.swift"), "VoicePool does not name Voice")
        #expect(map.namedFiles == ["Gone.swift"])
    }
}

/// The map, read from the document.
struct ArchitectureMap {
    static let root = BuildProducts.root
    /// The targets with a line of their own (a line that starts with one space and the target's name).
    let targets: [String]
    /// The folders named under each target (`   Folder/`).
    let folders: [(target: String, folder: String)]
    /// The words of the map.
    let words: Set<String>
    /// `Name.swift` as written in the map.
    let namedFiles: [String]
    private let text: String

    init(block: String) {
        text = block
        var targets: [String] = []
        var folders: [(String, String)] = []
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(" "), !line.hasPrefix("  "), let name = line.dropFirst().split(separator: " ").first,
                name.first?.isUppercase == true
            {
                targets.append(String(name))
            } else if line.hasPrefix("   "), !line.hasPrefix("    "),
                let label = line.dropFirst(3).split(separator: " ").first,
                label.hasSuffix("/"), let target = targets.last
            {
                folders.append((target, String(label.dropLast())))
            }
        }
        self.targets = targets
        self.folders = folders
        words = Set(
            block.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "+" || $0 == "_") }).map(String.init))
        namedFiles = block.split(whereSeparator: {
            !($0.isLetter || $0.isNumber || $0 == "+" || $0 == "_" || $0 == ".")
        })
        .filter { $0.hasSuffix(".swift") }.map(String.init)
    }

    /// Whether the map names `file` (a path): its name, or for `X+Y.swift` `+Y` in a map that names `X`.
    func names(file: String) -> Bool {
        let name = String((file.split(separator: "/").last ?? "").dropLast(".swift".count))
        if words.contains(name) { return true }
        guard let plus = name.firstIndex(of: "+") else { return false }
        return words.contains(String(name[..<plus])) && words.contains(String(name[plus...]))
    }

    static func read() throws -> ArchitectureMap {
        let text = try String(contentsOfFile: root + "/docs/ARCHITECTURE.md", encoding: .utf8)
        guard let heading = text.range(of: "\n## The file map\n"),
            let open = text.range(of: "```\n", range: heading.upperBound..<text.endIndex),
            let close = text.range(of: "\n```", range: open.upperBound..<text.endIndex)
        else { throw CocoaError(.fileReadCorruptFile) }
        return ArchitectureMap(block: String(text[open.upperBound..<close.lowerBound]))
    }

    static func isFolder(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// The Swift targets of Sources/ (the C ones are named together on the map's last line).
    static func sourceTargets() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root + "/Sources").filter {
            !$0.hasPrefix("C") && isFolder(root + "/Sources/" + $0)
        }.sorted()
    }

    /// Every Swift file under the `tops` folders, as a path below the root.
    static func swiftFiles(under tops: [String]) throws -> [String] {
        try tops.flatMap { top in
            try FileManager.default.subpathsOfDirectory(atPath: root + "/" + top).filter { $0.hasSuffix(".swift") }
                .map { top + "/" + $0 }
        }.sorted()
    }
}
