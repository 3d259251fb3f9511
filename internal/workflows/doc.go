// Package workflows holds the tests of the GitHub workflows in .github/workflows: that CI runs on the three
// systems we ship for, and that a release builds and publishes exactly the platforms of
// npm/sessionlocks/platforms.json, each platform package before the main one. actionlint (`make actionlint`)
// checks that they are valid workflows; these check that they do what we need.
package workflows
