// swift-tools-version: 6.1
// How long the observer's queries take while it reads a large tree, run by
// Benchmarks/queries-run: its own package, so the project's build and tests
// never build it.
import PackageDescription

let package = Package(
    name: "ObserverBench",
    dependencies: [
        .package(name: "fileshare", path: "../.."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "queries-bench",
            dependencies: [
                .product(name: "FileWatching", package: "fileshare"),
                .product(name: "Logging", package: "swift-log"),
            ]
        )
    ]
)
