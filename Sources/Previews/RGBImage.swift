import CImageThumbnail

#if canImport(Glibc)
    import Glibc
#endif

/// Decoded pixels: RGB, 3 bytes each, rows top to bottom.
package struct RGBImage: Sendable, Equatable {
    package var pixels: [UInt8]
    package var width: Int
    package var height: Int

    package init(pixels: [UInt8], width: Int, height: Int) {
        self.pixels = pixels
        self.width = width
        self.height = height
    }

    /// The pixels of a thumbnail made in C, which frees them.
    init?(taking image: inout cit_image) {
        defer { cit_image_free(&image) }
        guard let pixels = image.pixels, image.width > 0, image.height > 0 else { return nil }
        self.init(
            pixels: Array(UnsafeBufferPointer(start: pixels, count: Int(image.width) * Int(image.height) * 3)),
            width: Int(image.width), height: Int(image.height))
    }

    /// The colour at column `x`, row `y`.
    package func pixel(x: Int, y: Int) -> (red: UInt8, green: UInt8, blue: UInt8) {
        let index = (y * width + x) * 3
        return (pixels[index], pixels[index + 1], pixels[index + 2])
    }

    /// Box-filtered down so that its longer side is at most `maxSide`
    /// (never enlarged).
    package func fitted(maxSide: Int) -> RGBImage? {
        guard max(width, height) > maxSide else { return self }
        var out = cit_image()
        let status = pixels.withUnsafeBufferPointer {
            cit_scale_rgb($0.baseAddress, Int32(width), Int32(height), Int32(maxSide), &out)
        }
        guard status == 0 else { return nil }
        return RGBImage(taking: &out)
    }

    /// The image as it is meant to be seen, given the EXIF `orientation`
    /// it was stored with (1: as stored; 2–8: mirrored and/or rotated, 5–8
    /// with width and height swapped).
    package func oriented(_ orientation: Int) -> RGBImage {
        guard (2...8).contains(orientation) else { return self }
        let swapped = orientation >= 5
        let outWidth = swapped ? height : width
        let outHeight = swapped ? width : height
        var out = [UInt8](repeating: 0, count: pixels.count)
        for y in 0..<outHeight {
            for x in 0..<outWidth {
                // Where the seen pixel (x, y) is stored.
                let (sx, sy): (Int, Int)
                switch orientation {
                case 2: (sx, sy) = (width - 1 - x, y)
                case 3: (sx, sy) = (width - 1 - x, height - 1 - y)
                case 4: (sx, sy) = (x, height - 1 - y)
                case 5: (sx, sy) = (y, x)
                case 6: (sx, sy) = (y, height - 1 - x)
                case 7: (sx, sy) = (width - 1 - y, height - 1 - x)
                default: (sx, sy) = (width - 1 - y, x)
                }
                let from = (sy * width + sx) * 3
                let to = (y * outWidth + x) * 3
                out[to] = pixels[from]
                out[to + 1] = pixels[from + 1]
                out[to + 2] = pixels[from + 2]
            }
        }
        return RGBImage(pixels: out, width: outWidth, height: outHeight)
    }
}
