#!/bin/sh
echo other
