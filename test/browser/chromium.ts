/** Debian's Chromium for the browser tests and bench:console (playwright-core drives it). */
export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
/** Headless, and software WebGL (SwiftShader) for MapLibre on a machine without a GPU. */
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
