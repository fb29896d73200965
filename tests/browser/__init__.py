"""The browser end-to-end suite: JupyterLab and Debian's Chromium through Playwright."""
