// swift-tools-version: 6.1
// The least a SwiftNIO server does to answer a small GET, run by
// Benchmarks/serve-run beside fileshare and nginx (`--peers nio-floor`):
// its own package, so the project's build and tests never build it.
import PackageDescription

let package = Package(
    name: "NIOFloor",
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2")
    ],
    targets: [
        .executableTarget(
            name: "nio-floor",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        )
    ]
)
