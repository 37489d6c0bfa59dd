# install rules: filled later
