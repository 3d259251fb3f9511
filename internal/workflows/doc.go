// Package workflows holds the tests of the GitHub workflows in .github/workflows: that CI runs on the three
// systems we ship for, and that a release builds and publishes exactly the platforms of
// npm/sessionlocks/platforms.json, each platform package before the main one; and of what CI here and there rests
// on (.ci/run runs the Windows tests under Wine, .gitattributes keeps LF on Windows). actionlint
// (`make actionlint`) checks that the workflows are valid; these check that they do what we need.
package workflows
