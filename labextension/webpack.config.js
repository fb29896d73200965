// Merged by @jupyterlab/builder into its own configuration ("webpackConfig" in package.json).
//
// Module ids in the order webpack meets the modules, not hashed from their names: the name of
// the container entry module holds the absolute path of lib/index.js, so hashed ids would make
// remoteEntry.*.js depend on the folder the extension is built in, and the wheel built from the
// sdist would differ from the wheel built from the checkout (tests/test_packaging.py).
module.exports = {
  optimization: { moduleIds: 'natural' }
};
