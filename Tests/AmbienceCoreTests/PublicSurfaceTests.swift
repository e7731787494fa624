import Foundation
import Testing

@testable import AmbienceTestSupport

/// The public types `import Ambience` brings (the facade's and those of the engine targets it re-exports) are exactly
/// those docs/ARCHITECTURE.md lists under "The public surface": a type made public by accident, or one the document
/// forgets, fails here.
@Suite(.offTheCooperativePool) struct PublicSurfaceTests {
    static func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// The engine's targets under Sources/: the facade and the layers it re-exports (Sources/Ambience/Exports.swift).
    static let engineFolders = [
        "Ambience", "AmbienceCore", "AmbienceDesktop", "AmbienceLibrary", "AmbienceMixer", "AmbienceMusic",
        "AmbienceOutput", "AmbiencePlatform"
    ]

    /// Every `public` class, struct, enum, protocol, actor or typealias declared in the engine's targets, nested ones
    /// included, each with whether it is a typealias.
    static func declaredPublicTypes() throws -> [(name: String, isAlias: Bool)] {
        let folders = engineFolders.map { BuildProducts.root + "/Sources/" + $0 }
        let files = try folders.flatMap { folder in
            try #require(FileManager.default.enumerator(atPath: folder)).compactMap { $0 as? String }
                .filter { $0.hasSuffix(".swift") }.map { folder + "/" + $0 }
        }
        let declaration = try Regex(
            #"(?m)^\s*(?:@\w+\s+)*public\s+(?:final\s+)?(?:indirect\s+)?(class|struct|enum|protocol|actor|typealias)\s+(\w+)"#
        )
        var names: [(name: String, isAlias: Bool)] = []
        for file in files {
            let text = try read(file)
            for match in text.matches(of: declaration) {
                if let kind = match.output[1].substring, let name = match.output[2].substring {
                    names.append((String(name), kind == "typealias"))
                }
            }
        }
        return names
    }

    /// The names in backticks in the document's section (a `Type.Nested` counts as `Nested`).
    static func documentedTypes() throws -> [String] {
        let text = try read(BuildProducts.root + "/docs/ARCHITECTURE.md")
        let start = try #require(text.range(of: "## The public surface\n"))
        // The section ends at the next heading of any level (it is a `###` under "Decisions").
        let end = text.range(of: "\n#", range: start.upperBound..<text.endIndex)?.lowerBound ?? text.endIndex
        let list = text[start.upperBound..<end].split(separator: "\n").filter {
            $0.hasPrefix("- ") || $0.hasPrefix("  ")
        }
        let code = try Regex(#"`([A-Za-z0-9.]+)`"#)
        return list.flatMap { line in
            line.matches(of: code).compactMap { $0.output[1].substring.map { String($0.split(separator: ".").last!) } }
        }
    }

    @Test func thePublicTypesAreTheDocumentedOnes() throws {
        let declarations = try Self.declaredPublicTypes()
        let declared = declarations.map(\.name)
        // An alias keeps an old spelling working (`EngineConfiguration.Resampler` for `Resampler`): it may share the
        // name of the type it stands for, which the document lists once.
        let types = declarations.filter { !$0.isAlias }.map(\.name)
        let documented = try Self.documentedTypes()
        #expect(declared.count > 40, "the scan found only \(declared.count) public types: is the pattern still right?")
        #expect(Set(declared).subtracting(documented).sorted() == [], "public but not in docs/ARCHITECTURE.md")
        #expect(Set(documented).subtracting(declared).sorted() == [], "in docs/ARCHITECTURE.md but not public")
        #expect(Set(types).count == types.count, "two public types share a name")
        let aliases = declarations.filter(\.isAlias).map(\.name)
        #expect(Set(aliases).count == aliases.count, "two public typealiases share a name")
    }
}
